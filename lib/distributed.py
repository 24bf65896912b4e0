"""One sweep over several JAX processes (hosts), on JAX's public API.

Every process runs the same command. `join` connects it to the others
(`jax.distributed.initialize`: a coordinator address, the number of processes and this
process's id, or what JAX detects from SLURM, Open MPI or Kubernetes); `check_same_everywhere`
stops every process when they were started with different settings; each process then
computes its block of the runs (`uncertainty_claims.sharding.process_block`) on its own
devices, with no communication, and `gather_runs` hands every process all blocks.

The gather is `jax.experimental.multihost_utils.process_allgather`, a collective: it needs
no shared filesystem, and on CPUs it runs over JAX's gloo collectives (TCP, no MPI). It
carries each array as raw bytes, so every dtype arrives bit for bit (without float64 in
JAX, a float64 or int64 array would otherwise come back narrowed).

A launch that cannot work ends with an error naming the problem within a bounded time:
JAX itself aborts a process that cannot join (SIGABRT from C++, a "DEADLINE_EXCEEDED"
log), so `join` keeps its own deadline a little before JAX's and exits with a message
saying what was missing.
"""

from __future__ import annotations

import argparse
import errno
import hashlib
import os
import re
import socket
import sys
import threading
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

DEFAULT_JOIN_TIMEOUT_S = 300  # jax.distributed.initialize's initialization_timeout
DEFAULT_HEARTBEAT_TIMEOUT_S = 100  # ... and its heartbeat_timeout_seconds
JAX_EXTRA_WAIT_S = 30
"""JAX's own join deadline is this much later than `join`'s, so that `join`'s message, not
JAX's abort, ends a process that cannot join."""
JOIN_FAILED_STATUS = 3  # exit status of a process that could not join in time


class LaunchError(ValueError):
    """The launch settings of a multi-process run are invalid or disagree between processes."""


@dataclass(frozen=True)
class Launch:
    """How this process joins a multi-process run.

    It joins one when `detect` is set or any of coordinator, num_processes and process_id is
    given; what is left None, JAX detects from the cluster environment.

    Attributes:
      coordinator: "host:port" of process 0, which hosts the coordinator (every process the same).
      num_processes: how many processes take part.
      process_id: this process's index, 0 to num_processes - 1.
      join_timeout_s: how long a process waits for every process to join.
      heartbeat_timeout_s: after joining, how long a silent process counts as alive (JAX
        then stops the others).
      detect: join a multi-process run even with none of the three above given.
    """

    coordinator: str | None = None
    num_processes: int | None = None
    process_id: int | None = None
    join_timeout_s: int = DEFAULT_JOIN_TIMEOUT_S
    heartbeat_timeout_s: int = DEFAULT_HEARTBEAT_TIMEOUT_S
    detect: bool = False

    @property
    def multi_process(self) -> bool:
        """Whether this process joins others (else it runs alone)."""
        return self.detect or any(
            value is not None for value in (self.coordinator, self.num_processes, self.process_id)
        )

    def __post_init__(self) -> None:
        for name in ("num_processes", "join_timeout_s", "heartbeat_timeout_s"):
            value = getattr(self, name)
            if value is not None and (not _is_int(value) or value < 1):
                raise LaunchError(f"{name} must be a positive integer; got {value!r}")
        if self.process_id is not None and (not _is_int(self.process_id) or self.process_id < 0):
            raise LaunchError(f"process_id must be an integer >= 0; got {self.process_id!r}")
        if (
            self.process_id is not None
            and self.num_processes is not None
            and self.process_id >= self.num_processes
        ):
            raise LaunchError(
                f"process_id must be below num_processes: got process_id {self.process_id} "
                f"of {self.num_processes} processes (ids run from 0 to {self.num_processes - 1})"
            )
        if self.coordinator is not None:
            split_address(self.coordinator)
        if not isinstance(self.detect, bool):
            raise LaunchError(f"detect must be True or False; got {self.detect!r}")


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def split_address(address: str) -> tuple[str, int]:
    """The host and port of a "host:port" address ("[v6addr]:port" for IPv6).

    Raises:
      LaunchError: no host, no port, or a port outside 1-65535.
    """
    match = re.fullmatch(r"\[([0-9a-fA-F:.]+)\]:([0-9]+)|([^\s:\[\]]+):([0-9]+)", str(address))
    if match is None:
        raise LaunchError(
            f"coordinator must be 'host:port' (e.g. 10.0.0.1:1234 or [::1]:1234); got {address!r}"
        )
    host, port = (match[1], match[2]) if match[1] else (match[3], match[4])
    if not 1 <= int(port) <= 65535:
        raise LaunchError(f"coordinator port must be in 1-65535; got {port} in {address!r}")
    return host, int(port)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The launch options of a command-line script (read back by `from_arguments`)."""
    group = parser.add_argument_group(
        "several processes or hosts (docs/GPU.md, 'Over several hosts')",
        "Start the same command in every process, each with its --process-id; under SLURM, "
        "Open MPI or Kubernetes, --distributed alone lets JAX detect the rest.",
    )
    group.add_argument(
        "--distributed", action="store_true", help="join a multi-process run (implied below)"
    )
    group.add_argument(
        "--coordinator", metavar="HOST:PORT", help="process 0's address, a free port"
    )
    group.add_argument("--num-processes", type=int, metavar="N")
    group.add_argument("--process-id", type=int, metavar="I", help="0 to N-1")
    group.add_argument(
        "--join-timeout",
        type=int,
        default=DEFAULT_JOIN_TIMEOUT_S,
        metavar="S",
        help=f"seconds to wait for every process to join (default {DEFAULT_JOIN_TIMEOUT_S})",
    )
    group.add_argument(
        "--heartbeat-timeout",
        type=int,
        default=DEFAULT_HEARTBEAT_TIMEOUT_S,
        metavar="S",
        help="seconds after which a silent process counts as dead and the others stop "
        f"(default {DEFAULT_HEARTBEAT_TIMEOUT_S})",
    )


def from_arguments(args: argparse.Namespace) -> Launch:
    """The `Launch` the options of `add_arguments` ask for (by default: one process).

    Raises:
      LaunchError: an option's value is invalid (see `Launch`).
    """
    return Launch(
        coordinator=args.coordinator,
        num_processes=args.num_processes,
        process_id=args.process_id,
        join_timeout_s=args.join_timeout,
        heartbeat_timeout_s=args.heartbeat_timeout,
        detect=args.distributed,
    )


def join(launch: Launch) -> None:
    """Join the other processes as `launch` says; call before any JAX computation.

    Does nothing for a one-process launch. A process that has not joined after
    `launch.join_timeout_s` (a process missing or told another coordinator or number of
    processes, or no coordinator at the address) prints what was missing and exits with
    status `JOIN_FAILED_STATUS`.

    Raises:
      LaunchError: the coordinator, process count or id is neither given nor detected;
        process 0 cannot start the coordinator (its port taken); JAX computed already.
    """
    if not launch.multi_process:
        return
    if launch.process_id == 0 and launch.coordinator is not None:
        _check_port_free(split_address(launch.coordinator)[1])
    import jax

    watchdog = threading.Timer(launch.join_timeout_s, _give_up_joining, args=(launch,))
    watchdog.daemon = True
    watchdog.start()
    try:
        jax.distributed.initialize(
            coordinator_address=launch.coordinator,
            num_processes=launch.num_processes,
            process_id=launch.process_id,
            initialization_timeout=launch.join_timeout_s + JAX_EXTRA_WAIT_S,
            heartbeat_timeout_seconds=launch.heartbeat_timeout_s,
        )
    except ValueError as error:  # a setting neither given nor found in the environment
        raise LaunchError(
            f"{error}: pass --coordinator, --num-processes and --process-id, or start the "
            "processes under a launcher JAX detects (SLURM, Open MPI, Kubernetes)"
        ) from None
    except RuntimeError as error:  # JAX computed already, or the coordinator did not start
        raise LaunchError(
            f"could not join as process {_or_detected(launch.process_id)} with the "
            f"coordinator at {_or_detected(launch.coordinator)}: {error}"
        ) from None
    finally:
        watchdog.cancel()


def _check_port_free(port: int) -> None:
    """Fail clearly if the coordinator's port is taken: JAX's coordinator then fails to start,
    at times by crashing the process (SIGSEGV) instead of raising.

    JAX binds the port on every interface ("[::]:port") with SO_REUSEADDR, as gRPC does; so
    does this probe (IPv4 alone where the host has no IPv6). Another program could still
    take the port between this check and JAX's bind.
    """
    for family, address in ((socket.AF_INET6, ("::", port)), (socket.AF_INET, ("", port))):
        try:
            with socket.socket(family, socket.SOCK_STREAM) as probe:
                probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                probe.bind(address)
            return
        except OSError as error:
            if error.errno == errno.EADDRINUSE:
                raise LaunchError(
                    f"port {port} is already in use on this host, so process 0 cannot host the "
                    "coordinator there: choose a free port (the same in every process's "
                    "--coordinator)"
                ) from None
            # This address family is unavailable here: try the next; if none works, JAX's
            # own bind reports the problem.


def _or_detected(value: object) -> str:
    return "(detected)" if value is None else str(value)


def _give_up_joining(launch: Launch) -> None:
    """Runs in the watchdog thread while the main thread still waits in JAX's join."""
    where = _or_detected(launch.coordinator)
    if launch.process_id != 0 and launch.coordinator and not _answers(launch.coordinator):
        problem = (
            f"no coordinator answered at {where}: start process 0 there (it hosts the "
            "coordinator), or give every process process 0's address in --coordinator"
        )
    else:
        problem = (
            f"the coordinator at {where} did not see all {_or_detected(launch.num_processes)} "
            "processes join: check that every process was started, with the same "
            "--coordinator and --num-processes, and read the others' logs"
        )
    print(
        f"error: process {_or_detected(launch.process_id)} gave up joining after "
        f"{launch.join_timeout_s} s: {problem}",
        file=sys.stderr,
        flush=True,
    )
    os._exit(JOIN_FAILED_STATUS)  # the main thread is inside JAX's join, which never returns


def _answers(address: str) -> bool:
    try:
        with socket.create_connection(split_address(address), timeout=2):
            return True
    except OSError:
        return False


def check_same_everywhere(settings: Mapping[str, object], launch: Launch) -> None:
    """Stop every process unless all of them were given equal `settings` (by `repr`) and the
    same `launch.num_processes`, and hold as many devices each.

    Processes with different settings would compute different blocks of different sweeps.
    Every process calls this at the same point (a collective); it compares digests, so the
    settings may be of any size. Does nothing in a one-process run.

    Raises:
      LaunchError: in every process, naming each setting that differs.
    """
    import jax
    from jax.experimental import multihost_utils

    if jax.process_count() == 1:
        return
    mine = {**settings, "number of processes": launch.num_processes}
    digests = np.stack(
        [np.frombuffer(hashlib.sha256(repr(v).encode()).digest(), np.uint8) for v in mine.values()]
    )
    everyone = np.asarray(multihost_utils.process_allgather(digests))  # [process, setting, 32]
    differing = []
    for i, (name, value) in enumerate(mine.items()):
        others = np.flatnonzero((everyone[:, i] != everyone[0, i]).any(-1)).tolist()
        if others:
            who = (
                f"process {others[0]} differs" if len(others) == 1 else f"processes {others} differ"
            )
            differing.append(f"{name} ({who} from process 0; here: {value!r})")
    if differing:
        raise LaunchError(
            f"the processes were started with different settings - {'; '.join(differing)} "
            f"(this is process {jax.process_index()}). Start every process with the same "
            "arguments; only --process-id differs."
        )
    if launch.num_processes not in (None, jax.process_count()):
        raise LaunchError(
            f"every process was told {launch.num_processes} processes, but "
            f"{jax.process_count()} joined"
        )
    per_process = Counter(device.process_index for device in jax.devices())
    if len(set(per_process.values())) > 1:
        raise LaunchError(
            "every process must hold as many devices (each takes an equal block of the runs); "
            f"devices per process: {dict(sorted(per_process.items()))}"
        )


def gather_runs(block: Mapping[str, np.ndarray], n_runs: int) -> dict[str, np.ndarray]:
    """Every process's `block` (arrays whose leading axis is the runs of its block, as
    `uncertainty_claims.sharding.process_block` gives them), joined in process order, first
    `n_runs` runs: the whole sweep, in every process, bit for bit.

    Each process's block must hold the same arrays with the same shapes and dtypes.
    """
    import jax
    from jax.experimental import multihost_utils

    if jax.process_count() == 1:
        return {name: np.asarray(array)[:n_runs] for name, array in block.items()}
    joined = multihost_utils.process_allgather(as_bytes(block), tiled=True)
    return from_bytes(joined, block, n_runs)


def as_bytes(block: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Each array as uint8 rows, one per run: a collective carries them bit for bit."""
    return {
        name: np.ascontiguousarray(a).reshape(len(a), -1).view(np.uint8)
        for name, a in block.items()
    }


def from_bytes(
    joined: Mapping[str, np.ndarray], like: Mapping[str, np.ndarray], n_runs: int
) -> dict[str, np.ndarray]:
    """The first `n_runs` rows of `as_bytes` rows, as arrays of `like`'s dtypes and shapes."""
    return {
        name: np.ascontiguousarray(joined[name][:n_runs])
        .view(array.dtype)
        .reshape(-1, *array.shape[1:])
        for name, array in like.items()
    }
