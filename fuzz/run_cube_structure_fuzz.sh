#!/usr/bin/env bash
# Structural mutation fuzzing of the .cubex reader for SECONDS (default 60): the shared
# reports with members removed, duplicated, renamed or swapped, ids duplicated in anchor.xml
# and counts inflated must read or raise FormatError, and inconsistent ones must be refused;
# each child runs under a 512 MiB address-space limit (see cube_structure_mutate.py). Exits
# non-zero on any finding. Uses the installed cubescale (or CUBESCALE_DEV_BUILD).
set -euo pipefail
SECONDS_TO_RUN=${1:-60}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/fuzz/seed.sh"
OUT=${FUZZ_BUILD_DIR:-$ROOT/build/fuzz}
mkdir -p "$OUT"
python3 "$ROOT/fuzz/cube_structure_mutate.py" "$SECONDS_TO_RUN" "$OUT"
