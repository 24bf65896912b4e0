"""Two JAX processes on this machine run one sweep and get the one-process sweep bit for bit.

`scripts/device_sweep.py` started twice with a coordinator on 127.0.0.1 (lib/distributed.py,
two CPU devices per process) splits a small sweep over the processes: 3 seeds of the Yat
net for 1 epoch on 1,000 training rows and the uncertainty recipe from 3 root keys for 5
steps with 2 MC passes (the check is about where the runs are computed, not about
learning). Each process computes its block of the runs (`process_block`: the blocks its
two devices get when one process holding all four splits the sweep), and the results are
gathered into every process. The same command in one process with four CPU devices is the
reference: the results must equal it bit for bit, in every process, though each computed
only its block; only process 0 writes files. All three compile at XLA's lowest backend
optimisation level, the same in each: the bits they are compared on are made the same way,
for a fraction of the compile time, most of the test's time.

A launch that cannot work must end every process with a clear error within a bounded time,
never a hang. The time limits here belong to the harness: a hang fails the test instead of
blocking the run; the script itself stops a process that cannot join after `--join-timeout`.
"""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from fault_tools import child_env

from uncertainty_claims.distributed import (
    JOIN_FAILED_STATUS,
    Launch,
    LaunchError,
    as_bytes,
    from_bytes,
    split_address,
)
from uncertainty_claims.sharding import padded_length, process_block

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "device_sweep.py"
SMALL_SWEEP = (
    *("--nets=yat", "--seeds=0-2", "--epochs=1", "--train-rows=1000"),
    *("--keys=1-3", "--mc-steps=5", "--ensemble-steps=5", "--mc-samples=2", "--repeats=1"),
    "--compile-cache",  # the suite's folder (CLAIMS_COMPILATION_CACHE_DIR, set by conftest)
)
DEVICES_PER_PROCESS = 2
SWEEP_LIMIT_S = 600  # harness: a sweep process still running after this is a hang
JOIN_TIMEOUT_S = 2  # --join-timeout of the launches that cannot join: they must fail, so fast
# --join-timeout of the pairs that join and then disagree: long enough for the later of the
# two to start up beside eight other processes on a shared 2-core machine.
PAIR_JOIN_TIMEOUT_S = 120
# --join-timeout of a coordinator that waits for a process that never comes, long enough for
# the process started after its coordinator listens to give up first (start-up and
# JOIN_TIMEOUT_S), so that it finds the coordinator up.
COORDINATOR_WAIT_S = 30
# Interpreter start-up, importing JAX and the join deadline, for ten processes side by side
# on a 2-core machine that others share; past this, a launch that cannot work hangs.
BAD_LAUNCH_LIMIT_S = 180
FAST_COMPILE = "--xla_backend_optimization_level=0"


@dataclass(frozen=True)
class Finished:
    returncode: int
    stdout: str
    stderr: str


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start(*args: str | Path) -> subprocess.Popen:
    env = child_env(JAX_PLATFORMS="cpu", XLA_FLAGS=FAST_COMPILE)
    env.pop("JAX_COORDINATOR_ADDRESS", None)  # JAX would read it for a missing --coordinator
    return subprocess.Popen(
        [sys.executable, str(SCRIPT), *map(str, args)],
        env=env,
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


def launch(port: int, process_id: int, num_processes: int = 2) -> list[str]:
    return [
        f"--coordinator=127.0.0.1:{port}",
        f"--num-processes={num_processes}",
        f"--process-id={process_id}",
        f"--cpu-devices={DEVICES_PER_PROCESS}",
    ]


def listening(port: int, process: subprocess.Popen, limit_s: float) -> None:
    """Wait until something listens on `port` (the coordinator `process` starts)."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline and process.poll() is None:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.2)
    process.kill()
    pytest.fail(f"no coordinator listened on port {port}:\n{process.communicate()[1][-3000:]}")


def digest(stdout: str, process: str) -> str:
    lines = [line for line in stdout.splitlines() if line.startswith(f"{process}: arrays sha256 ")]
    assert len(lines) == 1, stdout
    return lines[0].split()[-1]


# ------------------------------------------------------------------ the sweep, two ways


@pytest.mark.slow
def test_two_processes_hold_the_one_process_sweep_bit_for_bit(tmp_path):
    """One test, not two sharing a fixture: under xdist, two tests could run the sweeps twice."""
    folders = {name: tmp_path / name for name in ("one", "p0", "p1")}
    for folder in folders.values():
        folder.mkdir()

    def outputs(name: str) -> list[str]:
        return [f"--out={folders[name] / 'sweep.json'}", f"--arrays={folders[name] / 'arrays.npz'}"]

    port = free_port()
    processes = {  # side by side: the reference with 4 CPU devices, the two with 2 each
        "one": start(*SMALL_SWEEP, f"--cpu-devices={2 * DEVICES_PER_PROCESS}", *outputs("one")),
        **{f"p{i}": start(*SMALL_SWEEP, *launch(port, i), *outputs(f"p{i}")) for i in (0, 1)},
    }
    done = dict(zip(processes, finish(list(processes.values()), SWEEP_LIMIT_S), strict=True))
    for name, finished in done.items():
        assert finished.returncode == 0, f"{name} failed:\n{finished.stderr[-4000:]}"

    # Each process computed its block only: 3 runs on 4 devices pad to 8, 2 per device;
    # process 0's devices take runs 0-1 and 2-2, process 1's only copies of run 2.
    for i, here in ((0, 3), (1, 1)):
        stdout = done[f"p{i}"].stdout
        assert f"process {i} of 2: yat: {here} of 3 seeds here" in stdout, stdout
        assert f"process {i} of 2: uncertainty: {here} of 3 root keys here" in stdout, stdout
    reference = digest(done["one"].stdout, "process 0 of 1")
    assert digest(done["p0"].stdout, "process 0 of 2") == reference
    assert digest(done["p1"].stdout, "process 1 of 2") == reference
    assert sorted(p.name for p in folders["p0"].iterdir()) == ["arrays.npz", "sweep.json"]
    assert list(folders["p1"].iterdir()) == []

    # The digest covers these arrays; compare them too, so a failure names what moved.
    with (
        np.load(folders["one"] / "arrays.npz") as alone,
        np.load(folders["p0"] / "arrays.npz") as split,
    ):
        assert sorted(split.files) == sorted(alone.files)
        assert any(name.startswith("calibration/") for name in alone.files)
        assert any(name.startswith("uncertainty/3/") for name in alone.files)
        moved = [
            name
            for name in alone.files
            if split[name].dtype != alone[name].dtype
            or split[name].shape != alone[name].shape
            or split[name].tobytes() != alone[name].tobytes()
        ]
    assert moved == []
    figures = {
        name: json.loads((folders[name] / "sweep.json").read_text()) for name in ("one", "p0")
    }
    assert (figures["p0"]["processes"], figures["one"]["processes"]) == (2, 1)
    assert len(figures["p0"]["devices"]) == len(figures["one"]["devices"]) == 4
    for entry in figures.values():  # the wall times differ, of course
        for timed in (*entry["calibration"].values(), entry["uncertainty"]):
            timed.pop("seconds")
    assert figures["p0"]["calibration"] == figures["one"]["calibration"]
    assert figures["p0"]["uncertainty"] == figures["one"]["uncertainty"]


# ------------------------------------------------------------------ launches that cannot work


@pytest.mark.slow
def test_launches_that_cannot_work_end_with_clear_errors():
    """Side by side, each process with its expected end:

    - process 1 alone: no coordinator answers at its address;
    - process 0 told 3 processes, process 1 told 2: the coordinator waits for a third that
      never comes, so neither joins (process 1 starts once process 0's coordinator listens,
      and gives up before process 0 does, so it finds the coordinator up);
    - process 0 told 2, process 1 told 3: they join (JAX takes process 0's count), and both
      stop on the differing count;
    - two processes given different seeds: both stop, naming the seeds;
    - process 0 on a port another program holds: it cannot start the coordinator.
    """
    ports = [free_port() for _ in range(4)]
    timeout = f"--join-timeout={JOIN_TIMEOUT_S}"
    pair_timeout = f"--join-timeout={PAIR_JOIN_TIMEOUT_S}"
    with socket.socket() as squatter:  # another program listening on a port
        squatter.bind(("", 0))
        squatter.listen()
        taken = squatter.getsockname()[1]
        cases = {
            "alone": [start(*SMALL_SWEEP, *launch(ports[0], 1), timeout)],
            "expects a third": [
                start(*SMALL_SWEEP, *launch(ports[1], 0, 3), f"--join-timeout={COORDINATOR_WAIT_S}")
            ],
            "told another count": [
                start(*SMALL_SWEEP, *launch(ports[2], i, 2 + i), pair_timeout) for i in (0, 1)
            ],
            "other seeds": [
                start(*SMALL_SWEEP, *launch(ports[3], i), f"--seeds=0-{2 + i}", pair_timeout)
                for i in (0, 1)
            ],
            "port taken": [start(*SMALL_SWEEP, *launch(taken, 0), timeout)],
        }
        listening(ports[1], cases["expects a third"][0], BAD_LAUNCH_LIMIT_S)
        cases["expects a third"].append(start(*SMALL_SWEEP, *launch(ports[1], 1, 2), timeout))
        everyone = [process for pair in cases.values() for process in pair]
        ended = dict(zip(everyone, finish(everyone, BAD_LAUNCH_LIMIT_S), strict=True))
    done = {case: [ended[process] for process in pair] for case, pair in cases.items()}

    expected = {
        "alone": [
            (
                JOIN_FAILED_STATUS,
                f"error: process 1 gave up joining after {JOIN_TIMEOUT_S} s: no coordinator "
                f"answered at 127.0.0.1:{ports[0]}",
            )
        ],
        "expects a third": [
            (
                JOIN_FAILED_STATUS,
                f"error: process {i} gave up joining after {wait} s: the coordinator "
                f"at 127.0.0.1:{ports[1]} did not see all {3 - i} processes join",
            )
            for i, wait in ((0, COORDINATOR_WAIT_S), (1, JOIN_TIMEOUT_S))
        ],
        "told another count": [
            (
                1,
                "device_sweep: the processes were started with different settings - number of "
                f"processes (process 1 differs from process 0; here: {2 + i}) (this is process {i})",
            )
            for i in (0, 1)
        ],
        "other seeds": [
            (
                1,
                "device_sweep: the processes were started with different settings - seeds "
                f"(process 1 differs from process 0; here: {tuple(range(3 + i))}) (this is "
                f"process {i})",
            )
            for i in (0, 1)
        ],
        "port taken": [(1, f"device_sweep: port {taken} is already in use on this host")],
    }
    problems = [
        f"{case}, process {i}: expected exit {status} saying {message!r}; got exit "
        f"{finished.returncode}:\n{finished.stderr[-3000:]}"
        for case, ends in expected.items()
        for i, ((status, message), finished) in enumerate(zip(ends, done[case], strict=True))
        if finished.returncode != status or message not in finished.stderr
    ]
    assert not problems, "\n\n".join(problems)


def test_a_process_id_outside_the_processes_is_a_usage_error():
    (finished,) = finish([start(*SMALL_SWEEP, *launch(free_port(), 2))], 60)
    assert finished.returncode == 2
    assert "process_id must be below num_processes: got process_id 2 of 2" in finished.stderr


# ------------------------------------------------------------------ the parts, in this process


@pytest.mark.parametrize(
    ("runs", "processes", "devices", "blocks"),
    [
        (3, 1, 1, [[0, 1, 2]]),
        (3, 1, 4, [[0, 1, 2, 2, 2, 2, 2, 2]]),
        (3, 2, 2, [[0, 1, 2, 2], [2, 2, 2, 2]]),
        (10, 2, 2, [[0, 1, 2, 3, 4, 5], [6, 7, 8, 9, 9, 9]]),
        (8, 4, 1, [[0, 1], [2, 3], [4, 5], [6, 7]]),
    ],
)
def test_process_blocks_are_the_one_process_padded_layout(runs, processes, devices, blocks):
    got = [process_block(runs, processes, devices, i) for i in range(processes)]
    assert got == blocks
    joined = [run for block in got for run in block]
    assert len(joined) == padded_length(runs, processes * devices)
    assert joined[:runs] == list(range(runs))


def test_process_block_rejects_a_process_outside_the_run():
    with pytest.raises(ValueError, match="0 <= process_index < n_processes"):
        process_block(3, 2, 2, 2)


def test_runs_travel_as_bytes_bit_for_bit():
    """Without float64 in JAX a gathered float64 or int64 array would come back narrowed;
    as bytes every dtype arrives as it left."""
    rng = np.random.default_rng(0)
    blocks = [
        {
            "float64": rng.standard_normal((3, 2, 2)),
            "int64": rng.integers(-(2**62), 2**62, 3),
            "bool": rng.random((3, 5)) < 0.5,
            "float32": rng.standard_normal((3, 4)).astype(np.float32),
        }
        for _ in range(2)
    ]
    joined = {
        name: np.concatenate([as_bytes(block)[name] for block in blocks]) for name in blocks[0]
    }
    back = from_bytes(joined, blocks[0], 5)
    for name, array in back.items():
        whole = np.concatenate([block[name] for block in blocks])[:5]
        assert array.dtype == whole.dtype and array.shape == whole.shape
        assert array.tobytes() == whole.tobytes()


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"num_processes": 0}, "num_processes must be a positive integer; got 0"),
        ({"num_processes": True}, "num_processes must be a positive integer; got True"),
        ({"process_id": -1}, "process_id must be an integer >= 0; got -1"),
        ({"process_id": 2, "num_processes": 2}, "process_id must be below num_processes"),
        ({"join_timeout_s": 0}, "join_timeout_s must be a positive integer; got 0"),
        ({"heartbeat_timeout_s": 0}, "heartbeat_timeout_s must be a positive integer; got 0"),
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
    ("address", "host", "port"),
    [
        ("10.0.0.1:1234", "10.0.0.1", 1234),
        ("node-7.cluster:4711", "node-7.cluster", 4711),
        ("[::1]:9", "::1", 9),
    ],
)
def test_coordinator_addresses(address, host, port):
    assert split_address(address) == (host, port)


def test_one_process_unless_told_otherwise():
    assert not Launch().multi_process
    assert Launch(detect=True).multi_process
    assert Launch(coordinator="10.0.0.1:1234").multi_process
