#!/usr/bin/env bash
# The engine alone, as a third document's author installs it: a fresh virtual environment
# with claim-audit and its drawing and test extras from engine/ (pytest, pytest-xdist, numpy,
# scipy, filelock, rich, markdown-it-py, matplotlib, pytest-timeout; no JAX), the engine's own
# tests (engine/tests), the worked example of docs/ADDING_A_DOCUMENT.md written into an empty
# folder, and pytest run there; then `python -m claim_audit new`. Passes when installing left the clone as it was
# (ignored files included), JAX is absent, the engine's tests pass, `pytest --help` shows the
# engine's options, and both audits are green.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
python=${PYTHON:-python3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$python" -m venv "$work/venv"
# Installing builds the wheel from engine/: nothing may be written into the clone, not even
# a file git ignores (a build/ or an .egg-info). git's view of engine/, ignored files
# included, before and after.
before=$(git status --porcelain --ignored --untracked-files=all -- engine)
"$work/venv/bin/python" -m pip install --quiet "$repo/engine[draw,test]"
after=$(git status --porcelain --ignored --untracked-files=all -- engine)
if [[ "$before" != "$after" ]]; then
    echo "engine_alone: installing the engine wrote into the clone:" >&2
    diff <(echo "$before") <(echo "$after") >&2 || true
    exit 1
fi
if "$work/venv/bin/python" -c "import jax" 2>/dev/null; then
    echo "engine_alone: jax is installed beside the engine" >&2
    exit 1
fi
# The engine's own tests, under the engine's own settings (engine/pyproject.toml), none of this
# repository's (its conftest.py, its pyproject.toml) loaded.
"$work/venv/bin/python" -m pytest -p no:cacheprovider -c "$repo/engine/pyproject.toml" \
    --rootdir "$repo/engine" --confcutdir "$repo/engine" -q -n auto "$repo/engine/tests"
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
