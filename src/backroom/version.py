"""backroom's version, the one place it is written (pyproject.toml reads it from here).

Read by the processes that print it as they start (`backroom worker`'s start line, the
webhook sender's User-Agent): `importlib.metadata.version` would import importlib's
metadata machinery and parse the installed METADATA with the email package, ~20 ms of
CPU at each worker's start.
"""

__version__ = "0.1.0"
