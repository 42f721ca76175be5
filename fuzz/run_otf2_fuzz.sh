#!/usr/bin/env bash
# Mutation fuzzing of OTF2 reading for SECONDS (default 60): the shared traces with random
# bytes changed or cut must read or raise FormatError (see otf2_mutate.py). Exits non-zero on
# any finding. Uses the installed cubescale (or CUBESCALE_DEV_BUILD).
set -euo pipefail
SECONDS_TO_RUN=${1:-60}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/fuzz/seed.sh"
OUT=${FUZZ_BUILD_DIR:-$ROOT/build/fuzz}
mkdir -p "$OUT"
python3 "$ROOT/fuzz/otf2_mutate.py" "$SECONDS_TO_RUN" "$OUT"
