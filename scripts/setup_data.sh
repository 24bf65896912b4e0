#!/usr/bin/env bash
# Make the data sets available on a fresh machine. Safe to run repeatedly.
#
# MNIST test ships with the project (fixtures/mnist/). Fashion-MNIST is taken from, in order:
#   1. CLAIMS_DATA_DIR, when set: scripts/fetch_data.py checks the files there and downloads
#      the missing ones into it;
#   2. Debian's dataset-fashion-mnist package (/usr/share/datasets/fashion-mnist/), installed
#      here when running as root with apt-get;
#   3. otherwise scripts/fetch_data.py downloads the original IDX files into the per-user
#      folder lib/data.py also searches (~/.cache/uncertainty-claims/data). No root needed.
# lib/data.py checks every file's sha256 again when it loads it. See docs/DATA.md.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
debian_file=/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz
python="${CLAIMS_PYTHON:-$root/.venv/bin/python}"

fetch() {
    # The project installed in $python (make setup) provides uncertainty_claims.data.
    if ! "$python" -c "import uncertainty_claims" 2>/dev/null; then
        echo "cannot fetch the data: $python does not have this project installed (run make setup)" >&2
        exit 1
    fi
    "$python" "$root/scripts/fetch_data.py" "$@"
}

if [[ -n "${CLAIMS_DATA_DIR:-}" ]]; then
    echo "CLAIMS_DATA_DIR=${CLAIMS_DATA_DIR} is set: checking its files, fetching what is missing."
    fetch --dest "$CLAIMS_DATA_DIR"
    exit 0
fi
if [[ -f "$debian_file" ]]; then
    echo "Fashion-MNIST already installed in /usr/share/datasets/fashion-mnist; nothing to do."
    exit 0
fi
if [[ "$(id -u)" -eq 0 ]] && command -v apt-get >/dev/null 2>&1; then
    echo "Installing Debian package dataset-fashion-mnist ..."
    export DEBIAN_FRONTEND=noninteractive
    if apt-get update -qq && apt-get install -y -qq dataset-fashion-mnist && [[ -f "$debian_file" ]]; then
        echo "Fashion-MNIST installed in /usr/share/datasets/fashion-mnist."
        exit 0
    fi
    echo "Debian's dataset-fashion-mnist could not be installed; downloading the files instead." >&2
fi
echo "Fashion-MNIST is not installed system-wide: fetching the original files (no root needed)."
if ! fetch --only fashion-mnist; then
    cat >&2 <<'MSG'
error: Fashion-MNIST could not be downloaded (see above). Other ways to provide it:
  - as root on Debian/Ubuntu: apt-get install dataset-fashion-mnist
  - or set CLAIMS_DATA_DIR to a directory holding fashion-mnist/ and mnist/, each with
    the original IDX .gz files (train-images-idx3-ubyte.gz, train-labels-idx1-ubyte.gz,
    t10k-images-idx3-ubyte.gz, t10k-labels-idx1-ubyte.gz; mnist/ needs only the t10k pair).
MSG
    exit 1
fi
