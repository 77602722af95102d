"""The import structure the code relies on, checked from the source (module and function level).

- No import cycle between the project's modules, whether the import sits at the top of a module
  or inside a function.
- No app imports another app's views.
- links uses analytics only through analytics.capture (and the foreign keys analytics adds),
  and links.selectors' totals through analytics.selectors.
- The redirect's own imports touch neither the database nor Redis, except the link cache and
  the visit hand-off.
- Other shorteners' APIs (compat/) write no rows themselves: they call links' services.
"""

from __future__ import annotations

import ast
from pathlib import Path

from django.conf import settings

ROOT = Path(settings.BASE_DIR)
PACKAGES = ("links", "analytics", "webhooks", "shorturl_project", "compat")


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
            targets = [f"{base}.{alias.name}" for alias in node.names] + [base]
            # `from pkg import module` names a module; `from module import name` does not.
            targets = [t for t in targets if t in MODULES] or [base]
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
        if target.endswith(".views") and target.split(".")[0] != module.split(".")[0]
    }
    assert offenders == set()


def test_links_uses_analytics_only_through_capture():
    """And links.selectors reads a link's totals from analytics.selectors (link_click_totals):
    one definition of clicks and people for every page, API and compat layer (issue #26)."""
    used = {
        (module, target)
        for module, targets in GRAPH.items()
        if module.startswith("links")
        for target in targets
        if target.startswith("analytics")
    }
    allowed = {("links.selectors", "analytics.selectors")}
    assert {target for _, target in used - allowed} <= {"analytics.capture"}, used


REDIRECT_MAY_USE = {
    "links.cache",
    "analytics.capture",
    "serving.fused_read",  # the two above in one Redis call
    "links.codes.shape",
    "links.codes.aliases",
    "serving.not_found_limit",  # counts 404s in process memory (no database, no Redis)
    "core.outages",  # tells an outage from a bug when the fast path fails
    "serving.gates",  # gated links only (a password, a cap, rules, variants): plain ones skip it
    "serving.unlock",  # the password page, imported by the Django view only when it is needed
    # Host → short domain: a table in process memory, read from the database once per process
    # and again only after a domain changes.
    "links.domains",
}


def test_the_redirect_imports_only_the_cache_the_hand_off_and_pure_code_rules():
    for entry_point in ("serving.redirect", "serving.hotpath"):
        used = GRAPH[entry_point] - {"serving.redirect", "links.codes", "links"}
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


ROW_WRITES = {"save", "delete", "create", "bulk_create", "get_or_create", "update_or_create"}
ROW_WRITES |= {"update", "bulk_update", "select_for_update"}


def test_compat_layers_write_no_rows_themselves():
    """Other shorteners' APIs (compat/) call links' services for every change: no ORM write, and
    no model or manager of their own."""
    offenders = []
    for module, path in MODULES.items():
        if not module.startswith("compat"):
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in ROW_WRITES
            ):
                offenders.append((module, node.lineno, node.func.attr))
            if isinstance(node, ast.Attribute) and node.attr == "objects":
                offenders.append((module, node.lineno, "objects"))
    assert any(module.startswith("compat.shlink") for module in MODULES)
    assert offenders == []
