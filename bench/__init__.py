"""Benchmarks: run with `python -m bench.NAME`; results go into docs/benchmarks.md.

Importing the package compiles backroom's sources to bytecode once (`compileall` skips
what is up to date). The benches start backroom in processes of their own, and each
should start as an installed backroom does: pip writes bytecode at install time, but
an editable checkout gets it only from the interpreter's own cache, which
`PYTHONDONTWRITEBYTECODE` (set on the machines here) turns off. Without it every worker
and server process compiled ~200 modules as it started, ~200 ms of CPU, inside the
processing window of a multi-process run; the peers, installed from wheels, did not.
"""

import compileall
from pathlib import Path

compileall.compile_dir(Path(__file__).resolve().parent.parent / "src" / "backroom", quiet=1)
