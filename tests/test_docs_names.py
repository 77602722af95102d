"""Every code reference in the docs names something that exists.

README.md and docs/*.md name modules, functions and files in backticks; code moves, and a name
left behind sends a reader to nothing. This reads every inline code span (fenced blocks are
examples, not references) and checks:

- a repo path (`links/services/policy.py`, `e2e/test_faults.py::test_x`): the file or folder is
  there (and the test function, after `::`); a path is one whose first part is a top-level entry
  of the checkout, so URLs (`/api/v1/`), media types and files made at run time are not paths;
- a dotted name that starts with a project package (`links.services.policy.with_default_scheme`):
  it is a module, or a module and a chain of attributes; `app.codename` may also be a model
  permission (`links.change_urllink`) and `app.W001` a system check id of that app;
- a function written as a call (`link_stats(*, link, start, end)`): some module of the project
  (tests aside) defines it, since tables of selectors and services name them without a module;
- `::test_x` on its own: a test of the file the doc last named with `path::test`.

docs/history/ keeps names as they were when its notes were written, so it is not read.
"""

from __future__ import annotations

import importlib
import importlib.util
import re
from pathlib import Path

from django.apps import apps
from django.conf import settings

ROOT = Path(settings.BASE_DIR)
PACKAGES = (
    "core",
    "workspaces",
    "accounts",
    "links",
    "analytics",
    "serving",
    "webhooks",
    "compat",
    "shorturl_project",
)
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

FENCE = re.compile(r"^ *(```|~~~).*?^ *\1", re.MULTILINE | re.DOTALL)
SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.DOTALL)
DOTTED = re.compile(rf"(?<![\w./-])(?:{'|'.join(PACKAGES)})(?:\.[A-Za-z_]\w*)+(?![\w/-])")
PATH = re.compile(r"(?<![\w./:@~-])((?:\.?[\w-]+)(?:/[\w.*-]+)*/?)(?:::(\w+))?")
CHECK_ID = re.compile(r"[a-z_]+\.[CDEIW]\d{3}")
CONTINUED = re.compile(r"::([A-Za-z_]\w*)")  # not `::1`, an address
# `entity_action(*, arg)`: one of the project's functions (a client library's `stats()` has no `_`)
SIGNATURE = re.compile(r"([a-z][a-z0-9]*_[a-z0-9_]*)\(.*\)")


def code_spans(path: Path) -> list[tuple[int, str]]:
    """(line number, text) of each inline code span of a markdown file, fenced blocks left out."""
    text = FENCE.sub(lambda block: "\n" * block.group(0).count("\n"), path.read_text())
    return [
        (text.count("\n", 0, span.start()) + 1, " ".join(span.group(2).split()))
        for span in SPAN.finditer(text)
    ]


def _top_level() -> set[str]:
    return {entry.name for entry in ROOT.iterdir() if not entry.name.startswith(".git")}


def path_problem(path: str, test_name: str | None) -> str | None:
    target = ROOT / path
    if "*" in path:
        return None if list(ROOT.glob(path)) else "no file matches"
    if not target.exists():
        return "no such file or folder"
    if test_name and not _defines(target.read_text(), test_name):
        return f"no {test_name} in it"
    return None


def _defines(source: str, name: str) -> bool:
    return re.search(rf"^\s*(?:async )?(?:def|class) {name}\b", source, re.MULTILINE) is not None


def _is_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:
        return False


def _is_permission(name: str) -> bool:
    label, _, codename = name.partition(".")
    if "." in codename or not apps.is_installed(label):
        return False
    for model in apps.get_app_config(label).get_models():
        meta = model._meta
        defaults = {f"{action}_{meta.model_name}" for action in meta.default_permissions}
        if codename in defaults or codename in {code for code, _ in meta.permissions}:
            return True
    return False


def _is_check_id(name: str) -> bool:
    if not CHECK_ID.fullmatch(name):
        return False
    package = ROOT / name.partition(".")[0]
    return any(f'"{name}"' in source.read_text() for source in package.rglob("*.py"))


def name_problem(name: str) -> str | None:
    """None when `name` is a module, a module's attribute chain, a permission or a check id."""
    if _is_module(name) or _is_permission(name) or _is_check_id(name):
        return None
    parts = name.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        module_name = ".".join(parts[:cut])
        if not _is_module(module_name):
            continue
        target = importlib.import_module(module_name)
        for depth, attribute in enumerate(parts[cut:], start=cut):
            if not hasattr(target, attribute):
                return f"{'.'.join(parts[:depth])} has no {attribute}"
            target = getattr(target, attribute)
        return None
    return "no such module"


def _project_sources() -> str:
    return "\n".join(
        source.read_text()
        for package in PACKAGES
        for source in (ROOT / package).rglob("*.py")
        if "tests" not in source.relative_to(ROOT).parts
    )


def function_problem(name: str, sources: str) -> str | None:
    return None if _defines(sources, name) else "no module of the project defines it"


def references() -> list[tuple[str, str, str, str | None]]:
    """(where, kind, reference, test name) for every path, dotted name and function signature."""
    top = _top_level()
    found = []
    for doc in DOCS:
        last_file = None  # `::test_x` on its own continues the last `path::test` of the doc
        for line, span in code_spans(doc):
            where = f"{doc.relative_to(ROOT)}:{line}"
            for match in DOTTED.finditer(span):
                found.append((where, "name", match.group(0), None))
            for match in PATH.finditer(span):
                path = match.group(1)
                if "/" in path and path.split("/")[0] in top:
                    found.append((where, "path", path, match.group(2)))
                    if match.group(2):
                        last_file = path
            if (test := CONTINUED.fullmatch(span)) and last_file:
                found.append((where, "path", last_file, test.group(1)))
            if signature := SIGNATURE.fullmatch(span):
                found.append((where, "function", signature.group(1), None))
    return found


def test_the_docs_find_references_to_check():
    kinds = {kind for _, kind, _, _ in references()}
    assert kinds == {"name", "path", "function"}


def test_every_code_reference_in_the_docs_resolves():
    sources = _project_sources()
    problems = []
    for where, kind, reference, test_name in references():
        if kind == "path":
            problem = path_problem(reference, test_name)
        elif kind == "name":
            problem = name_problem(reference)
        else:
            problem = function_problem(reference, sources)
        if problem:
            shown = f"{reference}::{test_name}" if test_name else reference
            problems.append(f"{where}: `{shown}`: {problem}")
    assert not problems, "stale code references in the docs:\n" + "\n".join(problems)
