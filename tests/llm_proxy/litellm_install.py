"""LiteLLM's proxy installed from the package index into a virtual environment of its own.

The environment lives in build/litellm-venv (or $BACKROOM_LITELLM_VENV) and is made from
requirements.txt and constraints.txt beside this file. A stamp inside it holds the hash
of those two files: while it matches, the environment is reused; when the pins change,
it is made anew. A file lock beside it keeps parallel runs (two worktrees, a land and
a local run) from installing into it at the same time.

LiteLLM stays out of backroom's own dependencies: it pins versions of the web stack
and the OpenAI SDK of its own.

`make test-deps` (which `make test` and .ci/run call) runs this file to install it before
the test session starts; the tests' fixtures still install it when it is missing.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
REQUIREMENTS = HERE / "requirements.txt"
CONSTRAINTS = HERE / "constraints.txt"
VENV_ENV = "BACKROOM_LITELLM_VENV"
STAMP_NAME = ".backroom-pins"
# A cold install downloads ~120 packages: minutes on a slow index, not hours.
INSTALL_TIMEOUT_S = 1_200


class LiteLLMInstallError(RuntimeError):
    """The LiteLLM environment could not be made; the message carries pip's output."""


def venv_path() -> Path:
    """Where the LiteLLM environment lives."""
    return Path(os.environ.get(VENV_ENV) or ROOT / "build" / "litellm-venv")


def pins_digest() -> str:
    """The hash of the pins the environment must have been made from."""
    digest = hashlib.sha256()
    for path in (REQUIREMENTS, CONSTRAINTS):
        digest.update(path.read_bytes())
    return digest.hexdigest()


def litellm_command(venv: Path | None = None) -> Path:
    """The `litellm` command of the environment."""
    return (venv or venv_path()) / "bin" / "litellm"


def is_installed(venv: Path | None = None) -> bool:
    """True when the environment exists and was made from the current pins."""
    venv = venv or venv_path()
    stamp = venv / STAMP_NAME
    return (
        litellm_command(venv).exists()
        and stamp.exists()
        and stamp.read_text().strip() == pins_digest()
    )


def ensure_litellm(report: Callable[[str], None] | None = None) -> Path:
    """Install the pinned LiteLLM proxy unless it is there already; returns the venv.

    `report`, when given, is called with one line before a (slow) install starts.
    """
    venv = venv_path()
    if is_installed(venv):
        return venv
    venv.parent.mkdir(parents=True, exist_ok=True)
    with (venv.parent / f"{venv.name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another run may be installing: wait for it
        if not is_installed(venv):
            if report is not None:
                report(f"installing LiteLLM's proxy into {venv} (once per pin change)")
            _install(venv)
    return venv


def _run(command: list[str]) -> None:
    done = subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=INSTALL_TIMEOUT_S,
        check=False,
    )
    if done.returncode != 0:
        raise LiteLLMInstallError(
            f"{' '.join(command)} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}"
        )


def _install(venv: Path) -> None:
    # A half-made or outdated environment is removed, not patched.
    shutil.rmtree(venv, ignore_errors=True)
    _run([sys.executable, "-m", "venv", str(venv)])
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet"]
    _run([*pip, "-r", str(REQUIREMENTS), "-c", str(CONSTRAINTS)])
    # Written last: an interrupted install leaves no stamp and is redone.
    (venv / STAMP_NAME).write_text(pins_digest() + "\n")


def main() -> None:
    """Install the environment unless it is up to date (`make test-deps`)."""
    venv = ensure_litellm(print)
    print(f"LiteLLM's proxy is installed in {venv}")


if __name__ == "__main__":
    main()
