"""Benchmarks: run with `python -m bench.NAME`; results go into docs/benchmarks.md.

Importing the package compiles backroom's sources to bytecode once (`compileall` skips
what is up to date). The benches start backroom in processes of their own, and each
should start as an installed backroom does: pip writes bytecode at install time, but
an editable checkout gets it only from the interpreter's own cache, which
`PYTHONDONTWRITEBYTECODE` (set on the machines here) turns off. Without it every worker
and server process compiled ~200 modules as it started, ~200 ms of CPU, inside the
processing window of a multi-process run; the peers, installed from wheels, did not.

The bench's own processes (workers that load `bench.noop_app`, PgQueuer's consumers in
`bench.postgres_peers`) import the package too: they skip the check, which the process
that started them made (an environment variable says so). Checking again, each spent
~30 ms of CPU stat-ing every source and its bytecode as it started; they do not import
`compileall` either (with `py_compile` and `importlib.util`, a few ms more each).
"""

import os
from pathlib import Path

_COMPILED = "BACKROOM_BENCH_COMPILED"

if not os.environ.get(_COMPILED):
    import compileall

    compileall.compile_dir(Path(__file__).resolve().parent.parent / "src" / "backroom", quiet=1)
    os.environ[_COMPILED] = "1"
