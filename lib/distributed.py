"""Joining a multi-process JAX run (several hosts, or several processes on one machine).

`initialize(launch)` wraps `jax.distributed.initialize`: it checks the launch settings
before JAX sees them, gives each process its CPU devices, selects JAX's gloo collectives
for CPUs, joins the coordinator and checks that every process was told the same number
of processes. After it, `jax.devices()` lists every process's devices, so
`uncertainty_claims.sharding.run_mesh()` spans all of them and `train_nets` / `run_many` split their
runs over every process (docs/MULTIHOST.md; tests/test_multiprocess.py).

What JAX does not report as a Python error: when not every process joins within
`init_timeout_s` (one died, was never started, or was told another coordinator or
process count), JAX stops the waiting process from C++ (SIGABRT; "DEADLINE_EXCEEDED ...
RegisterTask" on stderr). So `initialize` first prints what it is waiting for and what
a timeout means; the launcher or harness sees a non-zero exit some seconds after the
timeout (on the 2-core test machine, 6-7 s after joining began for a 1-2 s timeout).
"""

from __future__ import annotations

import argparse
import errno
import itertools
import json
import os
import re
import socket
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

CPU_DEVICES_FLAG = "--xla_force_host_platform_device_count"
CPU_COLLECTIVES = "gloo"  # JAX's own CPU collectives over TCP; no MPI needed
DEFAULT_INIT_TIMEOUT_S = 300  # JAX's default
COORDINATOR_VARIABLE = "JAX_COORDINATOR_ADDRESS"  # JAX's own; read here to check it first


class LaunchError(ValueError):
    """The launch settings of a multi-process run are invalid or disagree between processes."""


@dataclass(frozen=True)
class Launch:
    """How this process joins a multi-process run.

    A process joins a multi-process run when any of coordinator, num_processes and
    process_id is given, or `detect` is set; what is left None is then detected by JAX from
    the cluster environment (SLURM, Open MPI, Cloud TPU, Kubernetes; docs/MULTIHOST.md), as
    `jax.distributed.initialize()` does.

    Attributes:
      coordinator: "host:port" of process 0's coordinator service (every process the same).
      num_processes: how many processes take part.
      process_id: this process's index, 0 to num_processes - 1; process 0 hosts the coordinator.
      cpu_devices: CPU devices this process creates (XLA's host platform); only used when
        JAX computes on CPUs, e.g. to try a multi-device run on one machine.
      init_timeout_s: how long every process waits for all of them to join.
      detect: join a multi-process run even with none of the three above given.
    """

    coordinator: str | None = None
    num_processes: int | None = None
    process_id: int | None = None
    cpu_devices: int | None = None
    init_timeout_s: int = DEFAULT_INIT_TIMEOUT_S
    detect: bool = False

    @property
    def multi_process(self) -> bool:
        """Whether this process joins others (else it runs alone, on `cpu_devices` if given)."""
        return self.detect or any(
            value is not None for value in (self.coordinator, self.num_processes, self.process_id)
        )

    def __post_init__(self) -> None:
        for name in ("num_processes", "cpu_devices", "init_timeout_s"):
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
            coordinator_port(self.coordinator)
        if not isinstance(self.detect, bool):
            raise LaunchError(f"detect must be True or False; got {self.detect!r}")


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def coordinator_port(address: str) -> int:
    """The port of a "host:port" coordinator address ("[v6addr]:port" for IPv6).

    Raises:
      LaunchError: the address has no host or no port, or the port is not in 1-65535.
    """
    if not isinstance(address, str):
        raise LaunchError(f"coordinator must be a 'host:port' string; got {address!r}")
    match = re.fullmatch(r"(\[[0-9a-fA-F:.]+\]|[^\s:\[\]]+):([0-9]+)", address)
    if match is None:
        raise LaunchError(
            f"coordinator must be 'host:port' (e.g. 10.0.0.1:1234 or [::1]:1234); got {address!r}"
        )
    port = int(match[2])
    if not 1 <= port <= 65535:
        raise LaunchError(f"coordinator port must be in 1-65535; got {port} in {address!r}")
    return port


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The launch options of a command-line script (read back by `from_arguments`)."""
    group = parser.add_argument_group(
        "multi-process run (docs/MULTIHOST.md)",
        "Start the same command in every process; give each its --process-id. Under SLURM, "
        "Open MPI or on TPU pods, --distributed alone lets JAX detect the rest.",
    )
    group.add_argument(
        "--distributed",
        action="store_true",
        help="join a multi-process run (implied by the next three options)",
    )
    group.add_argument(
        "--coordinator",
        default=os.environ.get(COORDINATOR_VARIABLE),
        metavar="HOST:PORT",
        help=f"process 0's address and a free port there (default: ${COORDINATOR_VARIABLE})",
    )
    group.add_argument("--num-processes", type=int, metavar="N")
    group.add_argument(
        "--process-id", type=int, metavar="I", help="0 to N-1; 0 hosts the coordinator"
    )
    group.add_argument(
        "--cpu-devices",
        type=int,
        metavar="K",
        help="CPU devices this process creates (when JAX runs on CPUs; also for one process)",
    )
    group.add_argument(
        "--init-timeout",
        type=int,
        default=DEFAULT_INIT_TIMEOUT_S,
        metavar="S",
        help=f"seconds to wait for every process to join (default {DEFAULT_INIT_TIMEOUT_S})",
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
        cpu_devices=args.cpu_devices,
        init_timeout_s=args.init_timeout,
        detect=args.distributed,
    )


def initialize(launch: Launch) -> None:
    """Set this process up as `launch` says; call before any JAX computation.

    Creates `launch.cpu_devices` CPU devices if given; joins the other processes if
    `launch.multi_process`.

    Raises:
      LaunchError: JAX has started computing already; XLA_FLAGS asks for another number of
        CPU devices; this is process 0 and the coordinator's port is taken; the
        coordinator, process count or id is neither given nor found in the cluster
        environment; the processes were given different numbers of processes.
    """
    if not launch.multi_process and launch.cpu_devices is None:
        return  # nothing to set up
    if launch.multi_process and launch.process_id == 0 and launch.coordinator is not None:
        _check_port_free(coordinator_port(launch.coordinator))  # before seconds of imports
    import jax
    from jax._src import xla_bridge  # private, but the only way to ask without starting one

    if xla_bridge.backends_are_initialized():
        raise LaunchError(
            "initialize() must run before JAX's first computation in this process "
            "(something already used jax.devices() or computed)"
        )
    if launch.cpu_devices is not None:
        _request_cpu_devices(launch.cpu_devices)
    if not launch.multi_process:
        return
    jax.config.update("jax_cpu_collectives_implementation", CPU_COLLECTIVES)
    _say(
        f"process {_or_detected(launch.process_id)} of {_or_detected(launch.num_processes)}: "
        f"joining the coordinator at {_or_detected(launch.coordinator)}, waiting up to "
        f"{launch.init_timeout_s} s for every process. If JAX then stops this process with "
        "DEADLINE_EXCEEDED, a process did not join in time: check that all were started, "
        "with the same coordinator and number of processes, and read the others' logs."
    )
    try:
        jax.distributed.initialize(
            coordinator_address=launch.coordinator,
            num_processes=launch.num_processes,
            process_id=launch.process_id,
            initialization_timeout=launch.init_timeout_s,
        )
    except ValueError as error:  # JAX: a setting neither given nor detected
        raise LaunchError(
            f"{error} Pass --coordinator, --num-processes and --process-id (or the Launch "
            "fields), or start the processes under a launcher JAX detects (docs/MULTIHOST.md)"
        ) from error
    # JAX takes the count from process 0 and lets another process's differing count pass
    # (that process then waits for processes that do not exist).
    state = _distributed_state()
    count = state.num_processes
    _compare(state, {"number of processes": str(count)}, count, launch.init_timeout_s)
    _say(
        f"process {jax.process_index()} of {jax.process_count()}: joined; "
        f"{len(jax.local_devices())} of {len(jax.devices())} devices here"
    )


def _or_detected(value: object) -> str:
    return "(detected)" if value is None else str(value)


def _say(message: str) -> None:
    print(f"[uncertainty_claims.distributed] {message}", file=sys.stderr, flush=True)


def _request_cpu_devices(count: int) -> None:
    """Put the CPU device count into XLA_FLAGS (read when JAX starts its CPU backend)."""
    flags = os.environ.get("XLA_FLAGS", "")
    found = re.findall(rf"{CPU_DEVICES_FLAG}=(\S*)", flags)
    if found and found != [str(count)]:
        raise LaunchError(
            f"XLA_FLAGS already sets {CPU_DEVICES_FLAG}={','.join(found)}, but this launch asks "
            f"for {count} CPU devices: remove one of the two"
        )
    if not found:
        os.environ["XLA_FLAGS"] = f"{flags} {CPU_DEVICES_FLAG}={count}".strip()


def _check_port_free(port: int) -> None:
    """Fail clearly if the coordinator's port is taken (JAX's service would crash on it).

    JAX binds the port on every interface ("[::]:port"), with SO_REUSEADDR as gRPC does;
    so does this probe (IPv4 alone where the host has no IPv6). Another program could
    still take the port between this check and JAX's bind.
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
                    f"port {port} is already in use on this host, so process 0 cannot host "
                    "the coordinator there: choose a free port (the same one in every "
                    "process's --coordinator)"
                ) from None
            # This address family is unavailable here: try the next; if none works, JAX's
            # own bind reports the problem.


def check_same_everywhere(values: Mapping[str, object], *, timeout_s: int) -> None:
    """Fail in every process unless every process passed equal `values` (compared by `repr`).

    Processes started with different settings would run programs that do not match and
    wait for each other, or compute a different sweep each; this compares the settings
    first, through the coordinator's key-value store (no JAX computation). Call it in every process, in the
    same order as the other processes' calls. Does nothing in a one-process run.

    Raises:
      LaunchError: naming each setting that differs, with each process's value; or a
        process did not report within `timeout_s`.
    """
    state = _distributed_state()
    if state.client is not None:
        mine = {name: repr(value) for name, value in values.items()}
        _compare(state, mine, state.num_processes, timeout_s)


_exchanges = itertools.count()  # the same sequence in every process, so the keys match


def _distributed_state() -> Any:
    # Private, but JAX's own multi-process utilities (array serialization) use it so.
    from jax._src import distributed

    return distributed.global_state


def _compare(state: Any, mine: dict[str, str], count: int, timeout_s: int) -> None:
    """Publish `mine`, read processes 0 to `count` - 1 in turn, raise on any difference.

    A process that differs from process 0 stops reading there: if its count of processes
    is the wrong one (JAX takes process 0's), the later processes may not exist.
    """
    import jax

    prefix = f"uncertainty_claims.distributed/{next(_exchanges)}"
    state.client.key_value_set(f"{prefix}/{state.process_id}", json.dumps(mine))
    seen: dict[int, dict[str, str]] = {}
    for other in range(count):
        try:
            text = state.client.blocking_key_value_get(f"{prefix}/{other}", timeout_s * 1000)
        except jax.errors.JaxRuntimeError as error:  # DEADLINE_EXCEEDED
            raise LaunchError(
                f"process {other} did not report its settings within {timeout_s} s ({error})"
            ) from None
        seen[other] = json.loads(text)
        if other == 0 and seen[0] != mine:
            break
    seen[state.process_id] = mine
    differing = [name for name in mine if any(v.get(name) != mine[name] for v in seen.values())]
    if differing:
        described = "; ".join(
            f"{name}: " + ", ".join(f"{seen[p].get(name)} in process {p}" for p in sorted(seen))
            for name in differing
        )
        raise LaunchError(
            f"the processes were started with different settings - {described} "
            f"(this is process {state.process_id}). Start every process with the same "
            "arguments; only --process-id differs."
        )


def is_writer() -> bool:
    """Whether this process writes the run's files: process 0 (or the only process)."""
    import jax

    return jax.process_index() == 0
