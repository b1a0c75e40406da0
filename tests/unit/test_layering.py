"""The import rules of CONTRIBUTING.md, checked by reading `src/backroom` with `ast`.

- `backroom.core` imports nothing else of the package; `backroom.store` only the core.
- Only `cli` imports `backroom.cli`; only `api` and `cli` (for `serve`) import `backroom.api`.
- `backroom.client` imports only the core and the clock: it runs in callers' programs.
- SQL is written only under `backroom/store`; database drivers are imported only there.
- Time is read and slept only in `backroom/clock.py`.
- Only `api` (which serves it) imports `backroom.dashboard`.
- `api/`, `cli/` and `dashboard/` reach the store only through `service/`: they import nothing of
  `backroom.store` (the service re-exports the records they show), and never call a
  store method themselves (`app.store.stats(...)`); handing `app.store` to a service
  function is how they reach it.
"""

from __future__ import annotations

import ast
import re

from source_tree import Module, layer, package_modules, within

SQL = re.compile(r"^\s*(SELECT|INSERT\s+INTO|UPDATE|DELETE\s+FROM|CREATE|ALTER|DROP|WITH)\s")
DRIVERS = ("sqlite3", "asyncpg", "aiosqlite", "psycopg")
DATE_READS = {"now", "utcnow", "today"}


def _package_imports(module: Module) -> list[tuple[int, str]]:
    return [(line, name) for line, name in module.imports() if within(name, "backroom")]


def _violations(layers: set[str], allowed: tuple[str, ...]) -> list[str]:
    return [
        f"{module.name}:{line} imports {name}"
        for module in package_modules()
        if layer(module) in layers
        for line, name in _package_imports(module)
        if not any(within(name, package) for package in allowed)
    ]


def test_the_core_imports_nothing_else_of_the_package() -> None:
    assert _violations({"core"}, ("backroom.core",)) == []


def test_the_store_imports_only_the_core() -> None:
    assert _violations({"store"}, ("backroom.store", "backroom.core")) == []


def test_the_client_imports_only_the_core_and_the_clock() -> None:
    assert _violations({"client"}, ("backroom.client", "backroom.core", "backroom.clock")) == []


def test_only_the_cli_imports_the_cli_and_only_api_and_cli_import_the_api() -> None:
    wrong = [
        f"{module.name}:{line} imports {name}"
        for module in package_modules()
        for line, name in _package_imports(module)
        if (within(name, "backroom.cli") and layer(module) not in {"cli", "__main__.py"})
        or (within(name, "backroom.api") and layer(module) not in {"api", "cli"})
    ]
    assert wrong == []


def _strings(tree: ast.AST) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            found.append((node.lineno, node.value))
        elif isinstance(node, ast.JoinedStr) and node.values:
            head = node.values[0]
            if isinstance(head, ast.Constant) and isinstance(head.value, str):
                found.append((node.lineno, head.value))
    return found


def test_sql_is_written_only_under_the_store() -> None:
    outside = [module for module in package_modules() if layer(module) != "store"]
    sql = [
        f"{module.name}:{line}: {text.strip()[:40]!r}"
        for module in outside
        for line, text in _strings(module.tree)
        if SQL.match(text)
    ]
    drivers = [
        f"{module.name}:{line} imports {name}"
        for module in outside
        for line, name in module.imports()
        if name.split(".")[0] in DRIVERS
    ]
    assert sql == []
    assert drivers == []


def _clock_reads(module: Module) -> list[str]:
    reads = [f"imports {name}" for _, name in module.imports() if within(name, "time")]
    for node in ast.walk(module.tree):
        if not isinstance(node, ast.Attribute):
            continue
        base = node.value
        base_name = base.id if isinstance(base, ast.Name) else None
        if base_name in {"datetime", "date"} and node.attr in DATE_READS:
            reads.append(f"line {node.lineno}: {base_name}.{node.attr}")
        elif base_name == "asyncio" and node.attr == "sleep":
            reads.append(f"line {node.lineno}: asyncio.sleep")
        elif node.attr == "time" and _is_event_loop(base):
            reads.append(f"line {node.lineno}: the event loop's time()")
    return reads


def _is_event_loop(node: ast.expr) -> bool:
    if isinstance(node, ast.Name):
        return node.id == "loop"
    if isinstance(node, ast.Call):
        function = node.func
        name = function.attr if isinstance(function, ast.Attribute) else None
        return name in {"get_running_loop", "get_event_loop"}
    return False


def test_time_is_read_and_slept_only_in_the_clock_module() -> None:
    reads = {
        module.name: found
        for module in package_modules()
        if module.name != "clock.py" and (found := _clock_reads(module))
    }
    assert reads == {}


FRONTS = {"api", "cli", "dashboard"}
"""The layers that face people and programs: they reach the store through the service."""


def test_only_the_api_imports_the_dashboard() -> None:
    wrong = [
        f"{module.name}:{line} imports {name}"
        for module in package_modules()
        for line, name in _package_imports(module)
        if within(name, "backroom.dashboard") and layer(module) not in {"api", "dashboard"}
    ]
    assert wrong == []


def test_fronts_import_nothing_of_the_store() -> None:
    wrong = [
        f"{module.name}:{line} imports {name}"
        for module in package_modules()
        if layer(module) in FRONTS
        for line, name in module.imports()
        if within(name, "backroom.store")
    ]
    assert wrong == []


def _store_reaches(tree: ast.AST) -> list[int]:
    """Lines that call a store method or keep the store: `x.store.m(...)`, `s = x.store`."""
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute | ast.Assign | ast.AnnAssign) and _is_store(node.value):
            lines.append(node.lineno)
    return sorted(lines)


def _is_store(node: ast.expr | None) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "store"


def test_fronts_reach_the_store_only_through_the_service() -> None:
    reaches = {
        module.name: lines
        for module in package_modules()
        if layer(module) in FRONTS
        if (lines := _store_reaches(module.tree))
    }
    assert reaches == {}


def test_the_rules_see_what_they_look_for() -> None:
    """Each check finds a planted example, so an empty result means something."""
    planted = ast.parse(
        'q = "SELECT 1"\nimport time\nx = datetime.now()\nasyncio.sleep(1)\n'
        "n = asyncio.get_running_loop().time()\napp.store.stats(0)\ns = app.store\n"
    )
    module = Module("api/planted.py", "backroom.api.planted", 7, planted)
    assert [line for line, text in _strings(planted) if SQL.match(text)] == [1]
    assert len(_clock_reads(module)) == 4
    assert _store_reaches(planted) == [6, 7]
