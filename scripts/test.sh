#!/usr/bin/env bash
# Sets everything up and runs every test: C++ tests (ctest), the same C++ tests under
# AddressSanitizer + UBSan, static checks (ruff, mypy, stubtest), Python tests (pytest, including the mpirun tests in tests/mpi)
# and bounded fuzzing of the parsers.
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=${JOBS:-2}
# setup's `pip install .` builds the C++ tests too, in build/release beside the extension: the
# core library compiles once for both (scikit-build-core reads these variables, adding the
# define to pyproject.toml's; the wheel test in tests/ builds there again with the same
# settings and finds nothing to do). Its build runs $JOBS compilers at a time, as ours do.
export SKBUILD_BUILD_DIR=build/release SKBUILD_CMAKE_DEFINE="CUBESCALE_TESTS=ON" CMAKE_BUILD_PARALLEL_LEVEL="$JOBS"
bash scripts/setup.sh

# Every mpirun that tests, benchmarks and the demo start takes Open MPI's local settings from
# cubescale.mpirun.local_environment (the one place that knows them).
# A build that fails shows the compiler's output (ninja prints it on stdout, with its progress).
build() { local log="$1.log"; shift; "$@" >"$log" 2>&1 || { cat "$log"; echo "FAILED: $*"; exit 1; }; }
# Each section says when it starts (seconds since the setup began): CI must stay under 25 minutes.
section() { echo "== $1 (at ${SECONDS} s)"; }
# Real measurement data beside the checkout (../shared/data); tests and doctests of the
# installed package find it through this variable.
export CUBESCALE_SHARED_DATA=${CUBESCALE_SHARED_DATA:-$(cd .. && pwd)/shared/data}

section "C++ tests (release, built by setup)"
ctest --test-dir build/release --output-on-failure -j "$JOBS" --timeout 300

section "C++ tests (AddressSanitizer + UBSan)"
# -O0 -g1 (line tables: sanitizer reports keep file and line) instead of RelWithDebInfo's -O2 -g:
# the sanitized build is the longest step of CI on 2 cores. Measured on a clean clone
# (2026-11-27): -O1 built in about 510 s and its tests ran 33 s, -O0 builds in 304 s and its
# tests run 57 s (and no optimization removes an access the sanitizers should see).
cmake -S . -B build/asan -G Ninja -DCUBESCALE_TESTS=ON -DCUBESCALE_PYTHON=OFF \
  -DCUBESCALE_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O0 -g1 -DNDEBUG" >/dev/null
build build/asan-build ninja -C build/asan -j "$JOBS" cubescale_tests
# hwloc's PCI plugin (libpciaccess) leaks ~1 KB per topology load and is dlclosed before
# LeakSanitizer reports, so no suppression can name it; its OpenCL plugin (the ICD loader)
# leaves a dynamic-TLS entry of the unloaded library that crashes LeakSanitizer's scan at exit
# ("Tracer caught signal 11", seen on 2026-11-26 with hwloc 2.9 on Debian 12). Neither finds
# anything our tests look at (PCI devices, OpenCL GPUs): leave them out here only.
HWLOC_COMPONENTS=-pci,-opencl ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir build/asan --output-on-failure -j "$JOBS" --timeout 600

section "static checks (ruff, mypy, stubtest of the installed extension)"
python3 -m ruff check python tests benchmarks fuzz scripts examples
python3 -m mypy
(cd tests && python3 -m mypy.stubtest cubescale._core --allowlist stubtest_allowlist.txt)

section "API reference (pdoc, from the docstrings) into build/api"
python3 scripts/api_docs.py build/api

section "Python tests"
# Run from tests/ so that the installed package, not the source tree, is imported.
(cd tests && python3 -m pytest -q -p no:cacheprovider .)

if ls fuzz/run_*.sh >/dev/null 2>&1; then
  section "fuzzing (bounded, $JOBS fuzzers at a time)"
  # Each fuzzer writes its own files in build/fuzz; its output is shown whole when it finds
  # something, else its summary lines. xargs stops at the first failure (exit 255). 45 s each
  # (FUZZ_SECONDS) from a fixed seed: a regression check within CI's 25 minutes; longer runs
  # (bash fuzz/run_X.sh SECONDS, FUZZ_SEED=random) explore.
  mkdir -p build/fuzz-logs
  # The libFuzzer targets first, all at once with both cores (fuzz/CMakeLists.txt): the fuzzers
  # below then start from built files and never build in one directory at the same time.
  if command -v "${FUZZ_CXX:-clang++-14}" >/dev/null; then
    cmake -S fuzz -B "${FUZZ_BUILD_DIR:-build/fuzz}/cmake" -G Ninja -DCMAKE_CXX_COMPILER="${FUZZ_CXX:-clang++-14}" >/dev/null
    build build/fuzz-logs/build ninja -C "${FUZZ_BUILD_DIR:-build/fuzz}/cmake" -j "$JOBS"
    export FUZZ_PREBUILT=1
  fi
  printf '%s\n' fuzz/run_*.sh | xargs -P "$JOBS" -I{} bash -c '
    log="build/fuzz-logs/$(basename "$1" .sh).log"
    if bash "$1" "$2" >"$log" 2>&1; then grep -E "no findings|skipped" "$log"; else cat "$log"; echo "FAILED: $1"; exit 255; fi' _ {} "${FUZZ_SECONDS:-45}"
fi
section "done"
