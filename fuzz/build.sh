# Sourced by the run_*.sh scripts (after ROOT, OUT and CXX are set): `fuzz_build TARGET` builds
# the libFuzzer target with the CMake project in fuzz/ into $OUT/cmake and prints its path
# (a failed build prints the compiler's output on stderr and fails). scripts/test.sh builds
# every target once before it runs the fuzzers side by side and sets FUZZ_PREBUILT=1, so that
# two of them never run ninja in one directory at the same time.
fuzz_build() {
  local dir="$OUT/cmake"
  if [ -z "${FUZZ_PREBUILT:-}" ]; then
    mkdir -p "$dir"
    { cmake -S "$ROOT/fuzz" -B "$dir" -G Ninja -DCMAKE_CXX_COMPILER="$CXX" && ninja -C "$dir" "$1"; } \
      >"$dir/build-$1.log" 2>&1 || { cat "$dir/build-$1.log" >&2; return 1; }
  fi
  echo "$dir/$1"
}
