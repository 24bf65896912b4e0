#!/usr/bin/env bash
# The accelerator's figures of scripts/bench.py's TARGETS, in one run of a few minutes:
#   1. calibration: train_nets on SEEDS seeds per net, one call each, compilation included
#      (TARGETS sweep.calibration_first_s), and where run_many's time goes on
#      PROFILE_KEYS root keys (host inputs, compile, run; MC-Dropout and ensembles apart;
#      one key's `run`, the unit of a --seeds sweep);
#   2. uncertainty: run_many on KEYS root keys, one call, compilation included (TARGETS
#      sweep.uncertainty_first_s); --batch-mc: its MC-Dropout nets batched (a sweep's fast path);
#   3. the cold audit, `pytest claims -n WORKERS -m "claim or health"` on empty caches
#      (TARGETS audit.cold_s, GPU_COLD_AUDIT_S on an accelerator).
# Each part runs in its own process under a time limit, so one that overruns loses only its
# own figures. Prints the figures and writes them to $OUT/bench-gpu.json when OUT is set.
#
#   CLAIMS_DATA_DIR=.data scripts/device_bench.sh [--seeds 1000] [--keys 1000]
#       [--profile-keys 50] [--workers 8] [--no-audit] [--batch-mc]
#
# PYTHON picks the interpreter (default .venv/bin/python, else python3). CLAIMS_DATA_DIR,
# when set, must hold both data sets (docs/DATA.md), e.g. from Debian's copies:
#   mkdir -p .data/fashion-mnist .data/mnist
#   cp /usr/share/datasets/fashion-mnist/*.gz .data/fashion-mnist/; cp fixtures/mnist/*.gz .data/mnist/
# On a CPU, try it small: scripts/device_bench.sh --seeds 3 --keys 2 --profile-keys 2 --no-audit
set -uo pipefail
seeds=1000 keys=1000 profile_keys=50 workers=8 audit=1 batch_mc=()
while (($#)); do
    case $1 in
        --seeds) seeds=$2; shift 2 ;;
        --keys) keys=$2; shift 2 ;;
        --profile-keys) profile_keys=$2; shift 2 ;;
        --workers) workers=$2; shift 2 ;;
        --no-audit) audit=0; shift ;;
        --batch-mc) batch_mc=(--batch-mc); shift ;;
        *) echo "error: unknown argument $1 (see the usage at the top of $0)" >&2; exit 2 ;;
    esac
done
cd "$(dirname "$0")/.."
python=${PYTHON:-.venv/bin/python}
[[ -x "$python" ]] || python=python3
# The project need not be installed (a copied checkout): its modules are found from here.
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
# Several processes share one accelerator: none may take most of its memory up front.
export XLA_PYTHON_CLIENT_PREALLOCATE=false
parts=$(mktemp -d)
trap 'rm -rf "$parts"' EXIT

part() {  # part NAME LIMIT_S BENCH_ARGS...: one bench.py run, its JSON in $parts/NAME.json
    local name=$1 limit=$2 status=0
    shift 2
    echo "== $name (at most $limit s) =="
    timeout "$limit" "$python" scripts/bench.py "$@" --out "$parts/$name.json" || status=$?
    ((status == 124)) && echo "$name: stopped after $limit s; its figures are missing"
    return 0
}

start=$SECONDS
part calibration 180 --only sweep --seeds "$seeds" --keys 0 --repeats 0 --profile-keys "$profile_keys"
part uncertainty 120 --only sweep --seeds 0 --keys "$keys" --repeats 0 "${batch_mc[@]}"
((audit)) && part audit 120 --only audit --workers "$workers" --no-warm
echo "== done in $((SECONDS - start)) s =="

"$python" - "$parts" "${OUT:-}" <<'EOF'
import json, sys
from pathlib import Path

parts, out = Path(sys.argv[1]), sys.argv[2]
found = {p.stem: json.loads(p.read_text()) for p in sorted(parts.glob("*.json"))}
merged = {"machine": next((r["machine"] for r in found.values()), None), "parts": found}
print(json.dumps(merged["machine"]))
for name, report in found.items():
    for target, v in report.get("targets", {}).items():
        if v["value"] is None:
            continue
        print(f"{name:12s} {target:34s} {v['value']:10.2f} {v['target']:>9s}  "
              f"{'met' if v['met'] else 'NOT met'}")
    profile = report.get("sweep", {}).get("profile")
    if profile:
        print(f"{name:12s} run_many({profile['keys']}) profile: host inputs "
              f"{[round(s, 2) for s in profile['host_inputs_s']]} s, compile {profile['compile_s']:.1f} s, run "
              f"{profile['run']['median_s']:.2f} s; MC-Dropout alone "
              f"{profile['mc_dropout']['median_s']:.2f} s, ensembles alone "
              f"{profile['ensemble']['median_s']:.2f} s; run(1) alone "
              f"{profile['run_one_key']['median_s']:.2f} s")
if out:
    Path(out).mkdir(parents=True, exist_ok=True)
    (Path(out) / "bench-gpu.json").write_text(json.dumps(merged, indent=1))
    print(f"wrote {out}/bench-gpu.json")
EOF
