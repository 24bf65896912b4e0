#!/usr/bin/env bash
# The audit on a lent TPU machine, as a TPU user runs it (issue 52), in one command of at most
# 9 minutes: lay the project over the machine's JAX (../shared/TPU.md: wheels and data from
# .dev/, no network), run the README's audit command cold and then warm, timed, and leave the
# logs, audit.json and a timing summary in $OUT (at most 8 files).
#
#   OUT=/some/folder scripts/tpu_audit.sh        # from the repository root
#   OUT=/some/folder WARM=0 PROFILE=1 scripts/tpu_audit.sh   # cold only, profiled
#
# Needs .dev/wheels (the lock's small wheels for Python 3.11) and .dev/data/fashion-mnist
# (the four .gz files) beside the checkout, made on the CPU machine as ../shared/TPU.md says.
set -u
START=$SECONDS
BUDGET_S=${BUDGET_S:-540}   # 9 minutes in all
OUT=${OUT:?set OUT to the folder the logs go to}
PYTHON=${PYTHON:-python3}
mkdir -p "$OUT"
left() { echo $((BUDGET_S - (SECONDS - START))); }
now_ms() { echo $(($(date +%s%N) / 1000000)); }

# The project over the machine's JAX (../shared/TPU.md, "On the TPU machine"); SKIP_INSTALL=1
# where the project is installed already (a try-out on a CPU machine with PYTHON=.venv/bin/python).
[ "${SKIP_INSTALL:-0}" = 1 ] || {
    PIP_CONFIG_FILE=/dev/null $PYTHON -m pip install --isolated -q --only-binary=:all: --no-deps \
        --index-url file:///opt/pypi/simple --target /tmp/site matplotlib pillow fonttools tensorstore
    PIP_CONFIG_FILE=/dev/null $PYTHON -m pip install --isolated -q --no-index --no-deps --upgrade \
        --target /tmp/site .dev/wheels/*.whl
} >"$OUT/install.log" 2>&1
mkdir -p /tmp/pp
ln -sfn "$PWD/lib" /tmp/pp/uncertainty_claims
ln -sfn "$PWD/engine/claim_audit" /tmp/pp/claim_audit
export PYTHONPATH=${PYTHONPATH:+$PYTHONPATH:}/tmp/site:/tmp/pp
mkdir -p .data/mnist && cp fixtures/mnist/*.gz .data/mnist/
ln -sfn "$PWD/.dev/data/fashion-mnist" .data/fashion-mnist
export CLAIMS_DATA_DIR=$PWD/.data
export PYTHONUNBUFFERED=1
# The lent machine's runner sets PYTHONDONTWRITEBYTECODE=1, which a TPU user's shell does not:
# then every process (the audit's child processes too) compiles the checkout's modules afresh.
unset PYTHONDONTWRITEBYTECODE
# A fresh cache: the cold audit computes every order and compiles every program (a
# CLAIMS_CACHE_DIR given is kept, and the "cold" run is then only as cold as it is).
FRESH_CACHE=
if [ -z "${CLAIMS_CACHE_DIR:-}" ]; then
    FRESH_CACHE=$(mktemp -d /tmp/claims-cache.XXXXXX)
    export CLAIMS_CACHE_DIR=$FRESH_CACHE
fi
rm -rf report
echo "installed in $((SECONDS - START)) s; $(left) s left"

{
    echo "python: $($PYTHON --version 2>&1); cores: $(nproc)"
    $PYTHON -c 'import jax, flax, optax, pytest; print("jax", jax.__version__, "flax", flax.__version__, "optax", optax.__version__, "pytest", pytest.__version__)'
    $PYTHON -c 'from uncertainty_claims.accelerator import accelerator_platform as a; print("accelerator found without opening it:", a())'
    ls -d /dev/accel* /dev/vfio/* 2>/dev/null | tr '\n' ' '
    echo
} 2>&1 | tee "$OUT/machine.txt"

# The README's command for a TPU user (what `make audit` runs, without its venv set-up).
# AUDIT_PATHS: the test files or folders to run (default claims, the whole audit; one
# document's files make a partial run whose report goes to report/partial/).
read -ra PATHS <<<"${AUDIT_PATHS:-claims}"
AUDIT=($PYTHON -m pytest "${PATHS[@]}" -n auto -m "claim or health" -rfE --durations=15)
# AUDIT_K: a -k expression to leave claims out (say "not unc-16", the timing claim whose
# example runs on the host's CPU); WARM=0 skips the warm run.
if [ -n "${AUDIT_K:-}" ]; then AUDIT+=(-k "$AUDIT_K"); fi
echo "command: ${AUDIT[*]}" | tee -a "$OUT/machine.txt"

run_audit() {  # name, seconds allowed; the wall time, and the CPU time of the run with its children
    local name=$1 limit=$2 t0 status ms cpu TIMEFORMAT="%U %S"
    t0=$(now_ms)
    { time timeout -k 15 "$limit" "${AUDIT[@]}" >"$OUT/$name.log" 2>&1; } 2>"$OUT/$name.cpu"
    status=$?
    ms=$(($(now_ms) - t0))
    cpu=$(awk '{printf "%.1f", $1 + $2}' "$OUT/$name.cpu")
    printf '%s: exit %s in %d.%03d s (limit %s s); %s s of CPU with its child processes\n' \
        "$name" "$status" $((ms / 1000)) $((ms % 1000)) "$limit" "$cpu" | tee -a "$OUT/machine.txt"
    rm -f "$OUT/$name.cpu"
}

# PROFILE=1: the cold run sampled by scripts/audit_profile.py (profile.txt, compiles.txt in $OUT).
PLAIN_AUDIT=("${AUDIT[@]}")
if [ "${PROFILE:-0}" = 1 ]; then
    export PYTHONPATH=$PYTHONPATH:$PWD/scripts AUDIT_PROFILE_OUT=$OUT
    AUDIT=("${AUDIT[@]}" -p audit_profile)
fi
run_audit cold $(($(left) - ${WARM:-1} * 60 - 15))
AUDIT=("${PLAIN_AUDIT[@]}")
if [ -f report/audit.json ]; then cp report/audit.json "$OUT/audit.json"; fi
if [ -f report/partial/audit.json ]; then cp report/partial/audit.json "$OUT/audit-partial.json"; fi
if [ "${WARM:-1}" = 1 ] && [ "$(left)" -gt 30 ]; then run_audit warm $(($(left) - 20)); fi

# The summary: the run's verdicts, where it ran, and where its time went.
$PYTHON - "$OUT" <<'EOF' 2>&1 | tee "$OUT/summary.txt"
import json, re, sys
from pathlib import Path

out = Path(sys.argv[1])
print((out / "machine.txt").read_text().strip())
for name in ("audit.json", "audit-partial.json"):
    path = out / name
    if not path.is_file():
        continue
    audit = json.loads(path.read_text())
    meta = audit["metadata"]
    print(f"\n{name}: {audit.get('summary')}")
    print(f"  wall {meta.get('wall_s')} s, device {meta.get('device')}, counts {audit.get('counts')}")
    # The guide's example (unc-16) is timed alone, on the host's CPU, once the machine is idle:
    # the audit's own time is said apart from it.
    example = next((c["details"] for c in audit.get("claims", []) if c["id"] == "unc-16"), {})
    cold = re.search(r"cold: exit \d+ in ([\d.]+) s", (out / "machine.txt").read_text())
    if "seconds" in example and cold and name == "audit.json":
        print(f"  cold audit {float(cold[1]):.1f} s, of which the guide's example (unc-16, alone "
              f"on the host's CPU) {example['seconds']:.1f} s: "
              f"{float(cold[1]) - example['seconds']:.1f} s without it")
    errors = [c["id"] for c in audit.get("claims", []) if c.get("verdict") == "error"]
    if errors:
        print(f"  in ERROR: {errors}")
    for c in audit.get("claims", []):
        if c.get("verdict") == "refuted" and c.get("expected_to_hold"):
            print(f"  unrecorded REFUTED {c['id']}: measured {c.get('measured')} "
                  f"published {c.get('published')} tolerance {c.get('tolerance')}")
            orders = c.get("details", {}).get("orders", {})
            print("    orders:", {o: v.get("measured") for o, v in orders.items()})
    events = meta.get("cache", {}).get("events", [])
    computed = sorted((e for e in events if e["status"] != "hit"), key=lambda e: -e["seconds"])
    print("  computed entries (s; the faithful orders ran on the host CPU beside the chip):")
    for event in computed[:20]:
        print(f"    {event['seconds']:8.1f}  {event['entry']}")
log = out / "cold.log"
if log.is_file():
    text = log.read_text(errors="replace")
    print("\ncold log, per entry:", *re.findall(r"\[claims\] computed .*", text), sep="\n  ")
    durations = re.search(r"=+ slowest \d+ durations =+\n(.*?)\n\n", text, re.S)
    if durations:
        print("slowest tests:", durations.group(1), sep="\n")
    print("tail:", *text.strip().splitlines()[-4:], sep="\n  ")
EOF
# The gate against a CPU audit of the same commit, where one was brought along.
for name in audit.json audit-partial.json; do
    if [ -f .dev/cpu_audit.json ] && [ -f "$OUT/$name" ]; then
        echo "== $name against .dev/cpu_audit.json ==" | tee -a "$OUT/summary.txt"
        $PYTHON -m claim_audit portability .dev/cpu_audit.json "$OUT/$name" 2>&1 | tee -a "$OUT/summary.txt"
    fi
done
[ -z "$FRESH_CACHE" ] || rm -rf "$FRESH_CACHE"
echo "done in $((SECONDS - START)) s"
