"""Modules stay under 300 lines and functions under 50 (CONTRIBUTING.md, "Size").

A function is measured from its `def` to its last line, docstring included. Route and
CLI command declarations may be longer: they read as a list of routes or options. Each
such exception is named below, and must still need its place.
"""

from __future__ import annotations

from source_tree import Module, all_modules

MAX_MODULE_LINES = 300
MAX_FUNCTION_LINES = 50

# Declarations kept whole: a route factory's routes, a command's options.
LONG_DECLARATIONS = {
    ("src/backroom/api/routes/webhooks.py", "webhooks_router"),
    ("src/backroom/cli/serve.py", "serve_command"),
    ("src/backroom/cli/worker.py", "worker"),
    ("src/backroom/cli/tenants.py", "update"),
}
DECLARATION_DIRECTORIES = ("src/backroom/api/routes/", "src/backroom/cli/")


def _long_functions(module: Module) -> set[tuple[str, str]]:
    return {
        (module.name, function.name)
        for function in module.functions()
        if (function.end_lineno or function.lineno) - function.lineno + 1 > MAX_FUNCTION_LINES
    }


def test_no_module_is_over_300_lines() -> None:
    too_long = {
        module.name: module.lines for module in all_modules() if module.lines > MAX_MODULE_LINES
    }
    assert too_long == {}, "split these modules by job (one job per module)"


def test_no_function_is_over_50_lines() -> None:
    too_long = set().union(*(_long_functions(module) for module in all_modules()))
    too_long -= LONG_DECLARATIONS
    assert too_long == set(), "split these functions, or name a declaration in LONG_DECLARATIONS"


def test_long_declarations_are_routes_or_commands_that_still_need_the_exception() -> None:
    long_now = set().union(*(_long_functions(module) for module in all_modules()))
    for path, name in LONG_DECLARATIONS:
        assert path.startswith(DECLARATION_DIRECTORIES), f"{path}: only routes and commands"
        assert (path, name) in long_now, f"{path}:{name} is short now: drop its exception"
