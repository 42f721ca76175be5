#!/usr/bin/env bash
# Sets everything up and runs every test: C++ tests (ctest), the same C++ tests under
# AddressSanitizer + UBSan, static checks (ruff, mypy, stubtest), Python tests (pytest, including the mpirun tests in tests/mpi)
# and bounded fuzzing of the parsers.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh

# Every mpirun that tests, benchmarks and the demo start takes Open MPI's local settings from
# cubescale.mpirun.local_environment (the one place that knows them).
JOBS=${JOBS:-2}
# Real measurement data beside the checkout (../shared/data); tests and doctests of the
# installed package find it through this variable.
export CUBESCALE_SHARED_DATA=${CUBESCALE_SHARED_DATA:-$(cd .. && pwd)/shared/data}

echo "== C++ tests (release)"
cmake -S . -B build/ctest -G Ninja -DCUBESCALE_TESTS=ON -DCUBESCALE_PYTHON=OFF >/dev/null
ninja -C build/ctest -j "$JOBS" cubescale_tests >/dev/null
ctest --test-dir build/ctest --output-on-failure -j "$JOBS" --timeout 300

echo "== C++ tests (AddressSanitizer + UBSan)"
cmake -S . -B build/asan -G Ninja -DCUBESCALE_TESTS=ON -DCUBESCALE_PYTHON=OFF \
  -DCUBESCALE_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
ninja -C build/asan -j "$JOBS" cubescale_tests >/dev/null
# hwloc's PCI plugin (libpciaccess) leaks ~1 KB per topology load and is dlclosed before
# LeakSanitizer reports, so no suppression can name it: leave that plugin out here only.
HWLOC_COMPONENTS=-pci ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir build/asan --output-on-failure -j "$JOBS" --timeout 600

echo "== static checks (ruff, mypy, stubtest of the installed extension)"
python3 -m ruff check python tests benchmarks fuzz scripts examples
python3 -m mypy
(cd tests && python3 -m mypy.stubtest cubescale._core --allowlist stubtest_allowlist.txt)

echo "== API reference (pdoc, from the docstrings) into build/api"
python3 scripts/api_docs.py build/api

echo "== Python tests"
# Run from tests/ so that the installed package, not the source tree, is imported.
(cd tests && python3 -m pytest -q -p no:cacheprovider .)

if ls fuzz/run_*.sh >/dev/null 2>&1; then
  echo "== fuzzing (bounded)"
  for f in fuzz/run_*.sh; do bash "$f" "${FUZZ_SECONDS:-60}"; done
fi
