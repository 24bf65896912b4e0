#!/usr/bin/env bash
# The audit on whatever accelerator JAX sees (or on the CPU with other XLA_FLAGS: another
# valid float order, `make order-check`), compared with an audit made on a CPU.
#
#   scripts/gpu_check.sh CPU_AUDIT_JSON [REPORT_DIR]
#
# Runs `pytest claims -m "claim or health"` (the gate), writes the report to REPORT_DIR
# (default report/device), then prints the claims whose verdict differs from CPU_AUDIT_JSON
# and the figures that moved beyond their tolerance (python -m claim_audit.report diff). Exits with
# the gate's status, else 1 when a verdict differs (a verdict is a property of the claim,
# docs/VERDICTS.md), 3 when no verdict differs but a figure moved further than valid float
# orders move it (e.g. TF32 matmuls). PYTHON picks the interpreter (default .venv/bin/python, else python3);
# WORKERS the xdist worker count (default 4). pytest-benchmark, where installed, refuses
# xdist, so it is switched off.
set -euo pipefail
cpu_audit=${1:?usage: scripts/gpu_check.sh CPU_AUDIT_JSON [REPORT_DIR]}
report_dir=${2:-report/device}
if [[ ! -f "$cpu_audit" ]]; then
    echo "error: no CPU audit at $cpu_audit (make one with: make audit; it writes report/audit.json)" >&2
    exit 2
fi
python=${PYTHON:-.venv/bin/python}
[[ -x "$python" ]] || python=python3
# Several workers share one accelerator: none may take most of its memory up front.
export XLA_PYTHON_CLIENT_PREALLOCATE=false
"$python" -c 'import jax; d = jax.devices()[0]; print(f"JAX {jax.__version__}: backend {jax.default_backend()}, {len(jax.devices())} x {d.device_kind}")'
status=0
"$python" -m pytest claims -n "${WORKERS:-4}" -m "claim or health" -p no:benchmark \
    -p no:cacheprovider --report-dir "$report_dir" || status=$?
echo
echo "== against the CPU audit $cpu_audit =="
differ=0
"$python" -m claim_audit.report diff "$cpu_audit" "$report_dir/audit.json" || differ=$?
if [[ "$status" -eq 0 && "$differ" -ne 0 ]]; then
    case $differ in
        1) echo "error: verdicts differ from $cpu_audit" >&2 ;;
        3) echo "error: figures moved beyond their tolerance from $cpu_audit" >&2 ;;
        *) echo "error: the diff against $cpu_audit failed" >&2 ;;
    esac
    status=$differ
fi
exit "$status"
