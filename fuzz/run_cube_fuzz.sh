#!/usr/bin/env bash
# Fuzzes the .cubex reader for SECONDS (default 60) in two ways and exits non-zero on any
# finding (crash, sanitizer report, exception other than FormatError):
#  1. the C++ reader under libFuzzer + ASan + UBSan (clang++; skipped with a note if absent),
#  2. the Python API under atheris (pip install atheris; skipped with a note if absent).
# Seeds: every shared .cubex and each of its members (so mutations reach every parser), and
# files with trailing rows and extra members. The C++ target also reads every input on demand
# from a file (the path of large files) and compares.
# Needs the package importable (CUBESCALE_DEV_BUILD=build-dir PYTHONPATH=python, or installed).
set -euo pipefail
SECONDS_TO_RUN=${1:-60}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/fuzz/seed.sh"
OUT=${FUZZ_BUILD_DIR:-$ROOT/build/fuzz}
DATA=${CUBESCALE_SHARED_DATA:-$ROOT/../shared/data}/cubex
SEEDS="$OUT/cube_seeds"
mkdir -p "$OUT/cube_corpus" "$SEEDS"

# Whole small files and every member (members alone exercise the error paths early).
python3 - "$DATA" "$SEEDS" "$ROOT/tests" <<'PY'
import sys
from pathlib import Path
data, seeds = Path(sys.argv[1]), Path(sys.argv[2])
for path in sorted(data.glob("*.cubex")):
    raw = path.read_bytes()
    if len(raw) <= 400_000:
        (seeds / path.name).write_bytes(raw)
    offset = 0
    while offset + 512 <= len(raw) and raw[offset:offset + 512].strip(b"\0"):
        header = raw[offset:offset + 512]
        name = header[:100].rstrip(b"\0").decode(errors="replace").replace("/", "_")
        size = int(header[124:136].strip(b"\0 ") or b"0", 8)
        if size <= 200_000:
            (seeds / f"{path.stem}.{name}").write_bytes(raw[offset:offset + 512 + (size + 511) // 512 * 512])
        offset += 512 + (size + 511) // 512 * 512

# Files as Scalasca 2 and CUBE 4.0 writers leave them (issue #19), rebuilt with tarfile:
# every CUBEX.DATA member followed by a copy of its rows (whole trailing rows), and extra
# members (a text file, a remapping.spec) that the reader lists and keeps.
sys.path.insert(0, sys.argv[3])
from tar_members import archive, read_members
for name in ("call_tree_test", "kripke.p8", "all_dtypes", "mm.zcubex"):
    ms = read_members(str(data / f"{name}.cubex"))
    trailing = {n: (b + b[10:] if b.startswith(b"CUBEX.DATA") else b) for n, b in ms.items()}
    (seeds / f"{name}.trailing_rows").write_bytes(archive(trailing))
    extra = {"notes.txt": b"run on 4 nodes\n", "remapping.spec": b"<?xml version='1.0'?>\n<cube/>\n"}
    (seeds / f"{name}.extra_members").write_bytes(archive(extra | ms))
PY

HALF=$(( (SECONDS_TO_RUN + 1) / 2 ))
CXX=${FUZZ_CXX:-clang++-14}
if command -v "$CXX" >/dev/null; then
  . "$ROOT/fuzz/build.sh"
  FUZZER=$(fuzz_build cube_reader_fuzz)
  "$FUZZER" -seed="$LIBFUZZER_SEED" -max_total_time="$HALF" -max_len=400000 -timeout=20 -rss_limit_mb=4096 \
    -artifact_prefix="$OUT/" -print_final_stats=1 "$OUT/cube_corpus" "$SEEDS" 2>&1 | tail -n 12
  echo "cube reader fuzz (libFuzzer, ASan/UBSan): no findings in ${HALF}s"
else
  echo "cube reader fuzz: $CXX not found, libFuzzer run skipped"
fi

if python3 -c "import atheris" 2>/dev/null; then
  python3 "$ROOT/fuzz/fuzz_cube_reader.py" -seed="$LIBFUZZER_SEED" -max_total_time="$HALF" -max_len=400000 -timeout=20 \
    -rss_limit_mb=4096 -artifact_prefix="$OUT/atheris-" "$OUT/cube_corpus" "$SEEDS" 2>&1 | tail -n 8
  echo "cube reader fuzz (atheris): no findings in ${HALF}s"
else
  echo "cube reader fuzz: atheris not installed, Python run skipped"
fi
