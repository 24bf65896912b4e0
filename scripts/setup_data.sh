#!/usr/bin/env bash
# Make the data sets available on a fresh machine. Safe to run repeatedly.
#
# MNIST test ships with the project (fixtures/mnist/). Fashion-MNIST comes from Debian's
# dataset-fashion-mnist package (/usr/share/datasets/fashion-mnist/) unless CLAIMS_DATA_DIR
# names a directory holding fashion-mnist/ and mnist/ with the original IDX .gz files.
# lib/data.py checks every file's sha256 when it loads it.
set -euo pipefail

debian_file=/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz

if [[ -n "${CLAIMS_DATA_DIR:-}" ]]; then
    echo "CLAIMS_DATA_DIR=${CLAIMS_DATA_DIR} is set; using it, nothing to install."
    exit 0
fi
if [[ -f "$debian_file" ]]; then
    echo "Fashion-MNIST already installed in /usr/share/datasets/fashion-mnist; nothing to do."
    exit 0
fi
if [[ "$(id -u)" -eq 0 ]] && command -v apt-get >/dev/null 2>&1; then
    echo "Installing Debian package dataset-fashion-mnist ..."
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq dataset-fashion-mnist
    if [[ ! -f "$debian_file" ]]; then
        echo "error: dataset-fashion-mnist installed but $debian_file is missing." >&2
        exit 1
    fi
    echo "Fashion-MNIST installed in /usr/share/datasets/fashion-mnist."
    exit 0
fi
cat >&2 <<'MSG'
error: Fashion-MNIST is not available and this script cannot install it
(it needs root and apt-get). Either:
  - as root on Debian/Ubuntu: apt-get install dataset-fashion-mnist
  - or set CLAIMS_DATA_DIR to a directory holding fashion-mnist/ and mnist/, each with
    the original IDX .gz files (train-images-idx3-ubyte.gz, train-labels-idx1-ubyte.gz,
    t10k-images-idx3-ubyte.gz, t10k-labels-idx1-ubyte.gz; mnist/ needs only the t10k pair).
MSG
exit 1
