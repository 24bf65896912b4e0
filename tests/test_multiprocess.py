"""Two JAX processes on this machine run one sweep and get the one-process results.

`scripts/device_sweep.py` started twice with a coordinator on 127.0.0.1 (lib/distributed.py,
JAX's gloo CPU collectives, two CPU devices per process) spreads a small sweep over the four
devices of both processes: 3 seeds of the Yat net for 1 epoch on 1,000 training rows and the
uncertainty recipe from 3 root keys for 5 steps with 2 MC passes (the check is about where
the runs are computed, not about learning). The same command in one process with four CPU
devices is the reference. Both pad the 3 runs to 8, 2 per device
(`uncertainty_claims.sharding.padded_length`), so every device computes the same program on the same inputs
in both set-ups: the results must be equal bit for bit, in every process; only process 0
writes files. Compiling is most of the time (docs/MULTIHOST.md, "Time"): the processes keep
their programs in the suite's compiled-program cache, which spares the reference and
process 0 on a warm run (JAX writes it from process 0 only).

A launch that cannot work must end every process with a clear error, never a hang: a
process that never joins, processes told different numbers of processes, a coordinator port
that is taken. The time limits here belong to the harness: a hang fails the test instead of
blocking CI; the library itself only passes JAX its join timeout (`--init-timeout`).
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from uncertainty_claims.distributed import (
    COORDINATOR_VARIABLE,
    CPU_DEVICES_FLAG,
    Launch,
    LaunchError,
    coordinator_port,
    initialize,
)

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "device_sweep.py"
SMALL_SWEEP = (
    *("--nets=yat", "--seeds=0-2", "--epochs=1", "--train-rows=1000"),
    *("--keys=1-3", "--mc-steps=5", "--ensemble-steps=5", "--mc-samples=2", "--repeats=1"),
    "--compile-cache",  # the suite's folder (CLAIMS_COMPILATION_CACHE_DIR, set by conftest)
)
DEVICES_PER_PROCESS = 2
SWEEP_LIMIT_S = 300  # harness: a sweep process still running after this is a hang
JOIN_TIMEOUT_S = 1  # --init-timeout of the bad launches: they must fail, so fail fast
# JAX gives up joining some 5 s after its timeout (measured here: 6-7 s for 1-2 s); the
# rest is interpreter start-up and importing jax, for eight processes side by side on a
# shared 2-core machine. Past this, a bad launch counts as a hang.
BAD_LAUNCH_LIMIT_S = 90


@dataclass(frozen=True)
class Finished:
    returncode: int
    stdout: str
    stderr: str


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


# The processes are compared with each other, not with the recipe: compiled at XLA's lowest
# backend optimisation level, the same in every process, their results must still agree
# bit for bit, for a quarter less CPU, most of it compiling (docs/MULTIHOST.md, "Time").
FAST_COMPILE = "--xla_backend_optimization_level=0"


def child_env(**extra: str) -> dict[str, str]:
    """This environment (compiled-program cache included) on CPUs, without a device count
    or a coordinator of its own, compiling fast."""
    env = {k: v for k, v in os.environ.items() if k != COORDINATOR_VARIABLE}
    flags = re.sub(rf"{CPU_DEVICES_FLAG}=\S*", "", env.get("XLA_FLAGS", ""))
    env = {**env, "JAX_PLATFORMS": "cpu", "XLA_FLAGS": flags.strip(), **extra}
    env["XLA_FLAGS"] = f"{env['XLA_FLAGS']} {FAST_COMPILE}".strip()
    return env


def start(*args: str | Path, **env: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, str(SCRIPT), *map(str, args)],
        env=child_env(**env),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish(processes: list[subprocess.Popen], limit_s: float) -> list[Finished]:
    """Wait for every process, killing all that outlive `limit_s` (a hang fails the test)."""
    deadline = time.monotonic() + limit_s
    done = []
    try:
        for process in processes:
            left = max(deadline - time.monotonic(), 0.1)
            stdout, stderr = process.communicate(timeout=left)
            done.append(Finished(process.returncode, stdout, stderr))
    except subprocess.TimeoutExpired:
        for process in processes:
            process.kill()
            process.communicate()
        pytest.fail(f"a process still ran after {limit_s} s: hung instead of failing")
    return done


def launch_options(port: int, process_id: int, num_processes: int = 2) -> list[str]:
    return [
        f"--coordinator=127.0.0.1:{port}",
        f"--num-processes={num_processes}",
        f"--process-id={process_id}",
        f"--cpu-devices={DEVICES_PER_PROCESS}",
    ]


def arrays_digest(stdout: str) -> str:
    found = re.findall(r"arrays sha256 ([0-9a-f]{64})", stdout)
    assert len(found) == 1, stdout
    return found[0]


# ------------------------------------------------------------------ the sweep, two ways


@pytest.mark.slow
def test_two_processes_hold_the_one_process_results_and_only_process_0_writes(tmp_path):
    """One test, not two sharing a fixture: under xdist, two tests could run the sweeps twice."""
    folders = {name: tmp_path / name for name in ("one", "p0", "p1")}
    for folder in folders.values():
        folder.mkdir()

    def outputs(name: str) -> list[str]:
        return [f"--out={folders[name] / 'sweep.json'}", f"--arrays={folders[name] / 'arrays.npz'}"]

    port = free_port()
    processes = {  # side by side: the reference with 4 CPU devices, the two with 2 each
        "one": start(*SMALL_SWEEP, f"--cpu-devices={2 * DEVICES_PER_PROCESS}", *outputs("one")),
        **{
            f"p{i}": start(
                *SMALL_SWEEP, *launch_options(port, i), "--init-timeout=120", *outputs(f"p{i}")
            )
            for i in (0, 1)
        },
    }
    done = dict(zip(processes, finish(list(processes.values()), SWEEP_LIMIT_S), strict=True))
    for name, finished in done.items():
        assert finished.returncode == 0, f"{name} failed:\n{finished.stderr[-4000:]}"

    reference = arrays_digest(done["one"].stdout)
    assert {name: arrays_digest(done[name].stdout) for name in ("p0", "p1")} == {
        "p0": reference,
        "p1": reference,
    }
    assert sorted(p.name for p in folders["p0"].iterdir()) == ["arrays.npz", "sweep.json"]
    assert list(folders["p1"].iterdir()) == []

    # The digest covers these arrays; compare them too, so a failure names what moved.
    with (
        np.load(folders["one"] / "arrays.npz") as alone,
        np.load(folders["p0"] / "arrays.npz") as split,
    ):
        assert sorted(split.files) == sorted(alone.files)
        assert any(name.startswith("calibration/") for name in alone.files)
        assert any(name.startswith("uncertainty/") for name in alone.files)
        moved = {
            name: float(np.max(np.abs(split[name].astype(np.float64) - alone[name])))
            for name in alone.files
            if split[name].dtype != alone[name].dtype
            or not np.array_equal(split[name], alone[name])
        }
    assert moved == {}
    figures = {
        name: json.loads((folders[name] / "sweep.json").read_text()) for name in ("one", "p0")
    }
    assert figures["p0"]["processes"] == 2
    assert len(figures["p0"]["devices"]) == len(figures["one"]["devices"]) == 4
    for entry in figures.values():  # the wall times differ, of course
        for timed in (*entry["calibration"].values(), entry["uncertainty"]):
            timed.pop("seconds")
    assert figures["p0"]["calibration"] == figures["one"]["calibration"]
    assert figures["p0"]["uncertainty"] == figures["one"]["uncertainty"]


# ------------------------------------------------------------------ launches that cannot work


def gave_up_joining(finished: Finished, process_id: int, port: int) -> bool:
    """JAX stopped a waiting process (SIGABRT from C++) after our message saying why."""
    return (
        finished.returncode != 0
        and f"process {process_id} of 2: joining the coordinator at 127.0.0.1:{port}, "
        f"waiting up to {JOIN_TIMEOUT_S} s"
        in finished.stderr
        and "DEADLINE_EXCEEDED" in finished.stderr
    )


def stopped_on_differing_settings(finished: Finished, process_id: int, difference: str) -> bool:
    return (
        finished.returncode == 1
        and (
            "device_sweep: the processes were started with different settings - "
            f"{difference} (this is process {process_id})"
        )
        in finished.stderr
    )


@pytest.mark.slow
def test_processes_that_cannot_run_together_all_stop_with_clear_errors():
    """Four pairs side by side (most of their time is waiting for JAX's join deadline):

    - a process that dies before joining, both ways round: process 1 is killed while it
      starts up, and process 0 gives up; process 0 is killed, and process 1 gives up;
    - a pair told different numbers of processes (JAX takes process 0's and would let
      process 1 wait for a third), and a pair given different seeds: both processes stop.

    Every process is reaped before anything is judged, and every problem is reported.
    """
    ports = [free_port() for _ in range(4)]
    dying = {
        alive: [
            start(
                *SMALL_SWEEP, *launch_options(ports[alive], i), f"--init-timeout={JOIN_TIMEOUT_S}"
            )
            for i in (0, 1)
        ]
        for alive in (0, 1)
    }
    for alive, pair in dying.items():
        pair[1 - alive].kill()  # still importing: it takes ~1 s to reach the join
    differing = {
        "number of processes: 2 in process 0, 3 in process 1": [
            start(*SMALL_SWEEP, *launch_options(ports[2], i, 2 + i), "--init-timeout=30")
            for i in (0, 1)
        ],
        "seeds: (0, 1, 2) in process 0, (0, 1, 2, 3) in process 1": [
            start(
                *SMALL_SWEEP,
                *launch_options(ports[3], i),
                f"--seeds=0-{2 + i}",
                "--init-timeout=30",
            )
            for i in (0, 1)
        ],
    }
    everyone = [process for pair in (*dying.values(), *differing.values()) for process in pair]
    done = dict(zip(everyone, finish(everyone, BAD_LAUNCH_LIMIT_S), strict=True))

    problems = []
    for alive, pair in dying.items():
        survivor, killed = done[pair[alive]], done[pair[1 - alive]]
        if killed.returncode != -signal.SIGKILL or "joining" in killed.stderr:
            problems.append(
                f"process {1 - alive} was not killed before joining:\n{killed.stderr[-2000:]}"
            )
        if not gave_up_joining(survivor, alive, ports[alive]):
            problems.append(
                f"process {alive}, left alone, did not give up joining with our message and "
                f"DEADLINE_EXCEEDED (exit {survivor.returncode}):\n{survivor.stderr[-3000:]}"
            )
    for difference, pair in differing.items():
        for i, process in enumerate(pair):
            if not stopped_on_differing_settings(done[process], i, difference):
                problems.append(
                    f"process {i} did not stop naming '{difference}' "
                    f"(exit {done[process].returncode}):\n{done[process].stderr[-3000:]}"
                )
    assert not problems, "\n\n".join(problems)


def test_a_taken_coordinator_port_is_named():
    """Process 0 names the port (JAX's coordinator would crash on it: SIGSEGV). The other
    processes then find no coordinator: the case of a process 0 that died, above."""
    with socket.socket() as squatter:  # another program listening on the port
        squatter.bind(("127.0.0.1", 0))
        squatter.listen()
        port = squatter.getsockname()[1]
        (coordinator,) = finish([start(*SMALL_SWEEP, *launch_options(port, 0))], BAD_LAUNCH_LIMIT_S)
    assert coordinator.returncode == 1
    assert f"device_sweep: port {port} is already in use on this host" in coordinator.stderr


def test_a_process_id_outside_the_processes_is_a_usage_error():
    finished = finish([start(*SMALL_SWEEP, *launch_options(free_port(), 2))], 30)[0]
    assert finished.returncode == 2
    assert "process_id must be below num_processes: got process_id 2 of 2" in finished.stderr


# ------------------------------------------------------------------ launch settings


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"num_processes": 0}, "num_processes must be a positive integer; got 0"),
        ({"num_processes": True}, "num_processes must be a positive integer; got True"),
        ({"process_id": -1}, "process_id must be an integer >= 0; got -1"),
        ({"process_id": 2, "num_processes": 2}, "process_id must be below num_processes"),
        ({"cpu_devices": 0}, "cpu_devices must be a positive integer; got 0"),
        ({"init_timeout_s": 0}, "init_timeout_s must be a positive integer; got 0"),
        ({"coordinator": "10.0.0.1"}, "coordinator must be 'host:port'"),
        ({"coordinator": ":1234"}, "coordinator must be 'host:port'"),
        ({"coordinator": "10.0.0.1:0"}, "coordinator port must be in 1-65535; got 0"),
        ({"coordinator": "10.0.0.1:65536"}, "coordinator port must be in 1-65535; got 65536"),
    ],
)
def test_bad_launch_settings_are_named(fields, message):
    with pytest.raises(LaunchError, match=re.escape(message)):
        Launch(**fields)


@pytest.mark.parametrize(
    ("address", "port"), [("10.0.0.1:1234", 1234), ("node-7.cluster:4711", 4711), ("[::1]:9", 9)]
)
def test_coordinator_addresses(address, port):
    assert coordinator_port(address) == port


def test_one_process_unless_told_otherwise():
    assert not Launch(cpu_devices=4).multi_process
    assert Launch(detect=True).multi_process
    assert Launch(coordinator="10.0.0.1:1234").multi_process


def test_a_device_count_that_xla_flags_contradicts_is_named():
    flags = f"{CPU_DEVICES_FLAG}=3"
    (finished,) = finish([start(*SMALL_SWEEP, "--cpu-devices=2", XLA_FLAGS=flags)], 60)
    assert finished.returncode == 1
    assert f"XLA_FLAGS already sets {flags}, but this launch asks for 2" in finished.stderr


def test_initialize_after_jax_started_is_an_error():
    import jax

    jax.devices()  # this process has started JAX's backend
    with pytest.raises(LaunchError, match="must run before JAX's first computation"):
        initialize(Launch(cpu_devices=2))
