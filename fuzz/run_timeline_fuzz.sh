#!/usr/bin/env bash
# Fuzzes metric expressions and timeline partials for SECONDS (default 60) under libFuzzer +
# ASan + UBSan and exits non-zero on any finding (see timeline_fuzz.cpp). Seeds: the
# expressions of the tests and of paper 004.
set -euo pipefail
SECONDS_TO_RUN=${1:-60}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/fuzz/seed.sh"
OUT=${FUZZ_BUILD_DIR:-$ROOT/build/fuzz}
SEEDS="$OUT/timeline_seeds"
mkdir -p "$OUT/timeline_corpus" "$SEEDS"
printf '%s' '"2" "stairstep" source-counter "sum" aggregate "0" diff-quot "4" "stairstep" source-counter "sum" aggregate "0" diff-quot /' > "$SEEDS/paper004"
printf '%s' '"energy" "linear" source-counter "avg" aggregate "flops" "stairstep" source-counter "max" aggregate "3" diff-quot *' > "$SEEDS/mixed"
printf '%s' '"flops" "stairstep" source-counter 2.5 - "energy" "linear" source-counter +' > "$SEEDS/local"
printf 'TLP1\000\002\000\000\000\000\000\000\000\000' > "$SEEDS/partial"

CXX=${FUZZ_CXX:-clang++-14}
if command -v "$CXX" >/dev/null; then
  . "$ROOT/fuzz/build.sh"
  FUZZER=$(fuzz_build timeline_fuzz)
  "$FUZZER" -seed="$LIBFUZZER_SEED" -max_total_time="$SECONDS_TO_RUN" -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
    -artifact_prefix="$OUT/timeline-" -print_final_stats=1 "$OUT/timeline_corpus" "$SEEDS" 2>&1 | tail -n 12
  echo "timeline fuzz (libFuzzer, ASan/UBSan): no findings in ${SECONDS_TO_RUN}s"
else
  echo "timeline fuzz: $CXX not found, libFuzzer run skipped"
fi
