"""One accelerator, several processes: which process of a run may open it, and where the
documents' own computation runs on a machine that has one.

A TPU chip is held by one process at a time: a second process that opens it stops with a
RuntimeError about libtpu's lockfile. So on a machine with an
accelerator one process of a run holds it (the controller of a run without xdist workers,
else worker gw0) and every other process (the other workers, the controller under xdist,
the child processes any of them starts) computes on the host's CPU. The decision is taken
before JAX starts a backend, from what the machine shows without opening the device:
JAX_PLATFORMS when set, else an installed accelerator plugin together with its device nodes.

The faithful orders (the documents' own computation, docs/RECIPES.md) run on the host's CPU
on every machine (`host_placement`): that is where they reproduce the published figures;
the other orders run on the default device. On a CPU-only machine this changes
nothing.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import os
import threading
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import ParamSpec, TypeVar

from ._child import stoppable

P = ParamSpec("P")
R = TypeVar("R")
T = TypeVar("T")

# Accelerator plugins JAX loads by default, and the device nodes their chips appear as.
_PLUGINS = {
    "tpu": (("libtpu",), ("accel[0-9]*", "vfio/[0-9]*")),
    "gpu": (("jax_cuda12_plugin", "jax_cuda13_plugin"), ("nvidia[0-9]*",)),
}
_GOOGLE_PCI_VENDOR = "0x1ae0"  # a TPU chip on the PCI bus, as JAX's own start-up looks for it
_ACCELERATOR_NAMES = {"tpu": "tpu", "cuda": "gpu", "rocm": "gpu", "gpu": "gpu"}


def accelerator_platform(
    environ: Mapping[str, str] = os.environ,
    dev: Path = Path("/dev"),
    installed: Callable[[str], bool] | None = None,
    pci: Path = Path("/sys/bus/pci/devices"),
) -> str | None:
    """The accelerator ("tpu" or "gpu") JAX computes on by default in a process started
    with `environ`, else None; found without opening any device.

    JAX_PLATFORMS, when set, decides: its first platform (JAX's default). Otherwise an
    accelerator counts when its JAX plugin is installed and its device nodes exist under
    `dev` (a TPU: /dev/accel* or /dev/vfio/<n>, or Google's vendor id on the PCI bus; a
    GPU: /dev/nvidia<n>).
    """
    named = environ.get("JAX_PLATFORMS", "").split(",")[0].strip().lower()
    if named:
        return _ACCELERATOR_NAMES.get(named)
    installed = installed or _installed
    for platform, (plugins, nodes) in _PLUGINS.items():
        if not any(map(installed, plugins)):
            continue
        if any(any(dev.glob(node)) for node in nodes) or (platform == "tpu" and _google(pci)):
            return platform
    return None


def _google(pci: Path) -> bool:
    for vendor in pci.glob("*/vendor"):
        with contextlib.suppress(OSError):
            if vendor.read_text().strip() == _GOOGLE_PCI_VENDOR:
                return True
    return False


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def holds_accelerator(worker: str | None, workers: int) -> bool:
    """Whether this process of a pytest run may open the accelerator: the controller
    (`worker` None) when the run has no xdist workers, else worker gw0 alone."""
    return worker == "gw0" if worker is not None else workers == 0


def keep_off_accelerator(*, children_only: bool) -> None:
    """Compute on the host's CPU: this process's JAX (unless `children_only`) and every
    process it starts from now on (JAX_PLATFORMS=cpu in its environment). Call it before
    JAX starts a backend in this process."""
    import jax

    # JAX reads JAX_PLATFORMS when it is imported (above): from here on the variable only
    # reaches the child processes, and this process's choice is its config.
    if not children_only:
        jax.config.update("jax_platforms", "cpu")
    os.environ["JAX_PLATFORMS"] = "cpu"


def place_processes(worker: str | None, workers: int) -> str | None:
    """On a machine with an accelerator, let this process of a pytest run hold it or keep
    it off (`holds_accelerator`); every child process computes on the host's CPU. The
    controller of a run with workers keeps off it without changing its environment, which
    the workers inherit. Returns the accelerator's platform, None on a CPU-only machine."""
    platform = accelerator_platform()
    if platform is None:
        return None
    if holds_accelerator(worker, workers):
        keep_off_accelerator(children_only=True)
    elif worker is None:
        import jax

        jax.config.update("jax_platforms", "cpu")
    else:
        keep_off_accelerator(children_only=False)
    return platform


# Pays only beside an accelerator: TARGETS["audit.cold_s"] there (GPU_COLD_AUDIT_S).
def open_in_background() -> threading.Thread:
    """Start JAX's backends in a thread of their own, so that opening the accelerator (seconds
    on a TPU) overlaps what this process does meanwhile (pytest collecting the tests). JAX starts its backends once, under a lock: the first computation waits for this
    start, and meets its error, if any, where it belongs."""
    import jax

    def start() -> None:
        with contextlib.suppress(Exception):  # met again by the first computation
            jax.devices()

    thread = threading.Thread(target=start, name="open-accelerator", daemon=True)
    thread.start()
    return thread


def host_placement() -> contextlib.AbstractContextManager:
    """The host's CPU as JAX's default device: where a faithful order computes, and where a
    sweep draws its inputs. A no-op where the CPU is JAX's default device already, so a
    CPU-only machine's figures do not change by a bit."""
    import jax

    if jax.default_backend() == "cpu":
        return contextlib.nullcontext()
    return jax.default_device(jax.devices("cpu")[0])


@contextlib.contextmanager
def on_host(when: bool = True) -> Iterator[None]:
    """`host_placement()` when `when` (a faithful order), else the default device."""
    with host_placement() if when else contextlib.nullcontext():
        yield


def carry_placement(fn: Callable[P, R]) -> Callable[P, R]:
    """`fn`, for another thread to call, under this thread's `jax.default_device` (a JAX
    setting that threads do not inherit); `fn` itself where none is set."""
    import jax

    device = jax.config.jax_default_device
    if device is None:
        return fn

    @functools.wraps(fn)
    def placed_fn(*args: P.args, **kwargs: P.kwargs) -> R:
        with jax.default_device(device):
            return fn(*args, **kwargs)

    return placed_fn


# Pays only beside an accelerator: TARGETS["audit.cold_s"] there (GPU_COLD_AUDIT_S).
def side_by_side(faithful: Callable[[], T], others: Callable[[], R]) -> tuple[T, R]:
    """`faithful()` and `others()`: one after the other where JAX computes on the CPU (as
    before, nothing changes there), else the faithful order on the host's CPU in a thread
    while this thread keeps the accelerator busy with the other orders."""
    import jax

    if jax.default_backend() == "cpu":
        first = faithful()
        return first, others()
    task, stop = stoppable(faithful)
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="faithful") as pool:
        pending = pool.submit(task)
        try:
            rest = others()
            return pending.result(), rest
        finally:  # here past pytest-timeout's budget, say: leaving waits for no child
            stop.set()


def on_the_host(function: Callable[..., R], *args: object) -> R:
    """`function(*args)`, work for the host's CPU (a faithful order, or the NumPy scoring of
    an order's outputs): here where JAX computes on the CPU (nothing changes there); beside an
    accelerator, in a child process on the host's CPU (`in_cpu_child`), so that it
    has host cores and an interpreter of its own rather than a thread competing for the
    interpreter with the ones that keep the chip busy. The function must be importable by
    name, its arguments and result picklable."""
    import jax

    if jax.default_backend() == "cpu":
        return function(*args)
    from ._child import in_cpu_child

    return in_cpu_child(function, *args, what=" on the host's CPU")


def computing_platform() -> str:
    """The platform this thread's computations run on now: the device `jax.default_device`
    names, else JAX's default backend. What a cache key records as where a result was
    computed."""
    import jax

    device = jax.config.jax_default_device
    if device is None:
        return jax.default_backend()
    return device if isinstance(device, str) else device.platform
