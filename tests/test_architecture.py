"""The import structure the code relies on, checked from the source (module and function level).

- The apps form layers that import only downward (core → workspaces → accounts → links →
  analytics → serving → webhooks → compat → shorturl_project): the contract in pyproject.toml,
  checked by import-linter, which sees imports inside functions too. Every package has a layer.
- No import cycle between the project's modules, whether the import sits at the top of a module
  or inside a function.
- No app imports another app's views (the URLconf of the composition root excepted).
- Selectors only read.
- The redirect's own imports touch neither the database nor Redis, except the link cache and
  the visit hand-off.
- Other shorteners' APIs (compat/) write no rows themselves: they call links' services.
"""

from __future__ import annotations

import ast
import subprocess
import sys
import tomllib
from pathlib import Path

from django.conf import settings

ROOT = Path(settings.BASE_DIR)
IMPORT_CONTRACT = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
# Every package of the product, each a layer of the contract (pyproject.toml).
PACKAGES = tuple(IMPORT_CONTRACT["root_packages"])


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _project_modules() -> dict[str, Path]:
    modules = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            relative = path.relative_to(ROOT).parts
            if "tests" in relative or "migrations" in relative:
                continue
            modules[_module_name(path)] = path
    return modules


MODULES = _project_modules()


def _resolve(module: str, path: Path, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    package = module.split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    base = package[: len(package) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def imports_of(module: str) -> set[str]:
    """Project modules `module` imports anywhere in its body (functions included)."""
    path = MODULES[module]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(module, path, node)
            # `from pkg import module` names the module (pkg's __init__ runs first for every
            # import of a submodule, so it is no edge of its own); `from module import name`
            # names the module.
            submodules = [f"{base}.{alias.name}" for alias in node.names]
            targets = [t for t in submodules if t in MODULES] or [base]
        else:
            continue
        found.update(t for t in targets if t in MODULES and t != module)
    return found


GRAPH = {module: imports_of(module) for module in MODULES}


def _cycles() -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in GRAPH[node]:
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for module in sorted(GRAPH):
        if module not in index:
            visit(module)
    return components


def test_the_checker_sees_the_imports_it_must_judge():
    """Guards the checker itself: known edges, relative and function-level, are found."""
    assert "links.cache" in GRAPH["serving.redirect"]  # from . import cache as link_cache
    assert "analytics.capture" in GRAPH["serving.redirect"]
    assert "links.codes.pool" in GRAPH["links.tasks"]  # from .codes import pool
    assert "analytics.services" in GRAPH["analytics.capture"]  # from . import services, spool


def test_no_import_cycles_at_module_or_function_level():
    assert _cycles() == []


def test_no_app_imports_another_apps_views():
    offenders = {
        (module, target)
        for module, targets in GRAPH.items()
        for target in targets
        if target.endswith(".views")
        and target.split(".")[0] != module.split(".")[0]
        and not module.startswith("shorturl_project.")  # the URLconf names every app's views
    }
    assert offenders == set()


def test_every_package_of_the_product_has_a_layer():
    packages = {
        path.parent.name
        for path in ROOT.glob("*/__init__.py")
        if path.parent.name != "tests"  # the project-wide tests, no layer of the product
    }
    assert packages == set(PACKAGES)
    (layers,) = [c for c in IMPORT_CONTRACT["contracts"] if c["type"] == "layers"]
    assert set(layers["layers"]) == set(PACKAGES)


def test_the_apps_import_only_downward():
    """import-linter's verdict on the contract; its report names each back-arrow and its line."""
    lint_imports = Path(sys.executable).with_name("lint-imports")
    result = subprocess.run(
        [str(lint_imports), "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]


def test_links_imports_no_analytics_even_inside_a_function():
    """The case the contract exists for, seen by this file's own reading too: clicks reach
    links' pages through links.selectors.click_totals_reader_set, set by analytics."""
    used = {
        (module, target)
        for module, targets in GRAPH.items()
        if module.split(".")[0] == "links"
        for target in targets
        if target.split(".")[0] in {"analytics", "serving", "webhooks", "compat"}
    }
    assert used == set()


def _is_selector(module: str) -> bool:
    return module.endswith(".selectors") or ".selectors." in module


def test_selectors_only_read():
    """A selector answers a question: it writes no row, and imports no service module that
    writes one (pure rule modules such as links.services.policy are fine), not even inside a
    function: workspaces' personal-workspace lookup used to create the row that way."""
    offenders = []
    for module, path in MODULES.items():
        if not _is_selector(module):
            continue
        offenders += [(module, line, what) for line, what in _row_writes(path)]
        offenders += [
            (module, target, what)
            for target in GRAPH[module]
            if ".services" in target
            for _, what in _row_writes(MODULES[target])[:1]
        ]
    assert any(_is_selector(module) for module in MODULES)
    assert offenders == []


REDIRECT_MAY_USE = {
    "links.cache",
    "analytics.capture",
    "serving.fused_read",  # the two above in one Redis call
    "links.codes.shape",
    "links.codes.aliases",
    "serving.not_found_limit",  # counts 404s in process memory (no database, no Redis)
    "core.outages",  # tells an outage from a bug when the fast path fails
    "serving.gates",  # gated links only (a password, a cap, rules, variants): plain ones skip it
    "serving.fallback",  # stopped links only (expired, revoked, limit reached): a 302 elsewhere
    "serving.unlock",  # the password page, imported by the Django view only when it is needed
    "serving.previews",  # a social preview's page, for preview fetchers of such links only
    # A domain's app-association files, from the same domain table as below (no I/O).
    "serving.app_links",
    # Host → short domain: a table in process memory, read from the database once per process
    # and again only after a domain changes.
    "links.domains",
}


def test_the_redirect_imports_only_the_cache_the_hand_off_and_pure_code_rules():
    for entry_point in ("serving.redirect", "serving.hotpath"):
        used = GRAPH[entry_point] - {"serving.redirect", "serving", "links.codes", "links"}
        assert used <= REDIRECT_MAY_USE, (entry_point, used - REDIRECT_MAY_USE)
    for pure in ("links.codes.shape", "links.codes.aliases"):
        tree = ast.parse(MODULES[pure].read_text())
        imported = {
            alias.name if isinstance(node, ast.Import) else node.module or ""
            for node in ast.walk(tree)
            if isinstance(node, ast.Import | ast.ImportFrom)
            for alias in node.names
        }
        storage = {name for name in imported if name.startswith(("django.db", "redis"))}
        assert not storage, (pure, storage)
        assert GRAPH[pure] <= {"links.codes.shape"}, (pure, GRAPH[pure])


# Writes whatever they are called on (a model instance, a queryset)…
ALWAYS_WRITES = {"save", "delete"}
# …and these only on a manager or a queryset (`Link.objects.create`, `.filter(…).update`), which
# tells them from dict.update and friends.
QUERYSET_WRITES = {"create", "bulk_create", "get_or_create", "update_or_create", "update"}
QUERYSET_WRITES |= {"bulk_update", "select_for_update"}


def _row_writes(path: Path) -> list[tuple[int, str]]:
    """Calls that write rows (`.save()`, `.objects.create()`, `.filter().update()`…), with their
    lines."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        name, receiver = node.func.attr, node.func.value
        on_queryset = isinstance(receiver, ast.Call) or (
            isinstance(receiver, ast.Attribute) and receiver.attr == "objects"
        )
        if name in ALWAYS_WRITES or (name in QUERYSET_WRITES and on_queryset):
            found.append((node.lineno, name))
    return found


def test_compat_layers_write_no_rows_themselves():
    """Other shorteners' APIs (compat/) call links' services for every change: no ORM write, and
    no model or manager of their own."""
    offenders = []
    for module, path in MODULES.items():
        if not module.startswith("compat"):
            continue
        offenders += [(module, line, what) for line, what in _row_writes(path)]
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Attribute) and node.attr == "objects":
                offenders.append((module, node.lineno, "objects"))
    for api in ("compat.shlink", "compat.yourls", "compat.bitly"):
        assert any(module.startswith(api) for module in MODULES), api
    assert offenders == []
