#!/usr/bin/env bash
# The engine alone, as a third document's author installs it: a fresh virtual environment
# with claim-audit and its drawing extra from engine/ (pytest, pytest-xdist, numpy, scipy,
# filelock, rich, markdown-it-py, matplotlib; no JAX), the worked example of docs/ADDING_A_DOCUMENT.md written
# into an empty folder, and pytest run there; then `python -m claim_audit new`. Passes when
# JAX is absent, `pytest --help` shows the engine's options, and both audits are green.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
python=${PYTHON:-python3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$python" -m venv "$work/venv"
"$work/venv/bin/python" -m pip install --quiet "$repo/engine[draw]"
rm -rf "$repo/engine/build"  # what pip's build of a local folder leaves
if "$work/venv/bin/python" -c "import jax" 2>/dev/null; then
    echo "engine_alone: jax is installed beside the engine" >&2
    exit 1
fi
mkdir "$work/project"
"$work/venv/bin/python" "$repo/scripts/guide_files.py" "$repo/docs/ADDING_A_DOCUMENT.md" "$work/project"
cd "$work/project"
"$work/venv/bin/python" -m pytest --help > "$work/help.txt"
grep -q -- "--report-dir" "$work/help.txt"
"$work/venv/bin/python" -m pytest -p no:cacheprovider --strict-markers --report-dir=report
test -s report/audit.json
# The starter command, from the installed package's own templates.
"$work/venv/bin/python" -m claim_audit new my_paper "$work/starter"
cd "$work/starter"
"$work/venv/bin/python" -m pytest -p no:cacheprovider --strict-markers --report-dir=report
test -s report/audit.json
echo "engine_alone: the worked example and the starter are green with the engine alone (no JAX)"
