"""A computation on the host's CPU in a child process of its own (JAX_PLATFORMS=cpu).

For work that needs a process to itself: XLA reads its flags once per process (the CPU's other
arithmetic, lib/other_arithmetic.py), and beside a process that keeps an accelerator busy, a
faithful order computes on the host's cores with an interpreter of its own
(`accelerator.on_the_host`).
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any


def in_cpu_child(
    function: Callable[..., Any], *args: Any, xla_flags: str | None = None, what: str = ""
) -> Any:
    """`function(*args)` computed on the CPU in a child process, with `xla_flags` as its
    XLA_FLAGS (default: this process's). The function must be importable by name (a
    module-level function, or a `functools.partial` of one); arguments and result travel
    pickled, through files of a temporary folder. `what` says where, for the error.

    Raises:
      RuntimeError: the child failed (its last lines of stderr say why).
    """
    env = {**os.environ, "JAX_PLATFORMS": "cpu"}
    if xla_flags is not None:
        env["XLA_FLAGS"] = xla_flags
    env.pop("CLAIMS_COMPILATION_CACHE_DIR", None)
    with tempfile.TemporaryDirectory(prefix="cpu-child-") as folder:
        task, result = Path(folder) / "task.pickle", Path(folder) / "result.pickle"
        task.write_bytes(pickle.dumps((function, args)))
        child = subprocess.run(
            [sys.executable, "-m", __name__, str(task), str(result)],
            env=env,
            capture_output=True,
            check=False,
        )
        if child.returncode != 0 or not result.is_file():
            tail = child.stderr.decode(errors="replace").strip().splitlines()[-5:]
            name = getattr(function, "__qualname__", None) or repr(function)
            raise RuntimeError(
                f"{name}{what} exited with status {child.returncode}: " + " | ".join(tail)
            )
        return pickle.loads(result.read_bytes())


if __name__ == "__main__":
    task_path, result_path = map(Path, sys.argv[1:3])
    task, arguments = pickle.loads(task_path.read_bytes())
    result_path.write_bytes(pickle.dumps(task(*arguments)))
