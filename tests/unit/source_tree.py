"""The project's Python source, parsed once, for the tests that check its conventions."""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "src" / "backroom"


@dataclass(frozen=True)
class Module:
    """One source file: `name` is its path relative to its tree (`store/rows.py`)."""

    name: str
    dotted: str
    lines: int
    tree: ast.Module

    def imports(self) -> Iterator[tuple[int, str]]:
        """(line, module) for every import, at the top or inside a function."""
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    yield node.lineno, alias.name
            elif isinstance(node, ast.ImportFrom):
                yield node.lineno, self._absolute(node)

    def _absolute(self, node: ast.ImportFrom) -> str:
        if node.level == 0:
            return node.module or ""
        package = self.dotted.split(".")[: -node.level]
        return ".".join([*package, *([node.module] if node.module else [])])

    def functions(self) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef]:
        """Every function and method, nested ones included."""
        for node in ast.walk(self.tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                yield node


def _parse(path: Path, base: Path, package: str) -> Module:
    source = path.read_text(encoding="utf-8")
    relative = path.relative_to(base)
    parts = [package, *relative.with_suffix("").parts] if package else relative.parts
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return Module(
        name=relative.as_posix(),
        dotted=".".join(parts),
        lines=len(source.splitlines()),
        tree=ast.parse(source, filename=str(path)),
    )


@functools.cache
def package_modules() -> tuple[Module, ...]:
    """Every module of `src/backroom`, named relative to it."""
    return tuple(_parse(path, PACKAGE, "backroom") for path in sorted(PACKAGE.rglob("*.py")))


@functools.cache
def all_modules() -> tuple[Module, ...]:
    """Every module of src/, tests/ and bench/, named relative to the repository."""
    paths = [path for tree in ("src", "tests", "bench") for path in (ROOT / tree).rglob("*.py")]
    return tuple(_parse(path, ROOT, "") for path in sorted(paths))


def layer(module: Module) -> str:
    """The first part of a package module's name: `store`, `api`, or `clock.py`."""
    return module.name.split("/", 1)[0]


def within(module: str, package: str) -> bool:
    """True when `module` is `package` or inside it."""
    return module == package or module.startswith(package + ".")
