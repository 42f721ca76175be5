#!/usr/bin/env bash
# Regenerates the type stubs of the C++ extension (python/cubescale/_core/*.pyi) from the
# built module: run after changing a binding. tests/test_core_stubs.py fails while they are stale.
# Uses the installed cubescale of $PYTHON (default python3, e.g. a virtualenv's), or
# CUBESCALE_DEV_BUILD=build-dir with PYTHONPATH=python.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"${PYTHON:-python3}" -m pybind11_stubgen cubescale._core -o "$out" --numpy-array-use-type-var --exit-code >/dev/null
"${PYTHON:-python3}" -m ruff format --quiet --line-length 120 "$out"
mkdir -p python/cubescale/_core
rm -f python/cubescale/_core/*.pyi
cp "$out"/cubescale/_core/*.pyi python/cubescale/_core/
echo "stubs: $(ls python/cubescale/_core/*.pyi | wc -l) files in python/cubescale/_core"
