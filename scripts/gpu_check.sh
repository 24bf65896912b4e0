#!/usr/bin/env bash
# The audit on whatever accelerator JAX sees (or on the CPU with other XLA_FLAGS: another
# valid float order, `make order-check`), compared with an audit made on a CPU.
#
#   scripts/gpu_check.sh CPU_AUDIT_JSON [REPORT_DIR]
#
# Runs `pytest claims -m "claim or health"` (the gate), writes the report to REPORT_DIR
# (default report/device), prints what moved against CPU_AUDIT_JSON (python -m
# claim_audit diff), then how many verdicts changed against what the rule's own error
# predicts (python -m claim_audit portability, docs/VERDICTS.md). Exits with the
# gate's status, else 1 when a verdict crossed between holds and refuted or more verdicts
# changed than predicted. PYTHON picks the interpreter (default .venv/bin/python, else python3);
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
    -p no:cacheprovider "--report-dir=$report_dir" || status=$?
echo
echo "== against the CPU audit $cpu_audit =="
"$python" -m claim_audit diff --verdicts-only "$cpu_audit" "$report_dir/audit.json" || true
echo
echo "== verdicts changed, against the rule's own error =="
portable=0
"$python" -m claim_audit portability "$cpu_audit" "$report_dir/audit.json" || portable=$?
if [[ "$status" -eq 0 ]]; then
    status=$portable
fi
exit "$status"
