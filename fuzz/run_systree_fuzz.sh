#!/usr/bin/env bash
# Builds the system tree parser fuzzer (clang libFuzzer + ASan + UBSan) and runs it for
# SECONDS (default 60), seeded with real trees. Exits non-zero on any finding.
set -euo pipefail
SECONDS_TO_RUN=${1:-60}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/fuzz/seed.sh"
OUT=${FUZZ_BUILD_DIR:-$ROOT/build/fuzz}
mkdir -p "$OUT/systree_corpus" "$OUT/systree_seeds"
CXX=${FUZZ_CXX:-clang++-14}
. "$ROOT/fuzz/build.sh"
FUZZER=$(fuzz_build systree_fuzz)
python3 - "$OUT/systree_seeds" <<'PY'
import sys
from pathlib import Path
from cubescale.systree import SingleNodeTree, SystemTree
out = Path(sys.argv[1])
trees = {"juqueen": SystemTree.from_shape("juqueen-threads"), "figure4": SystemTree.figure4(),
         "hw": SystemTree.local(synthetic="pack:2 l3:1 core:4 pu:2", cpus="0", host="h")}
for name, tree in trees.items():
    (out / f"{name}.seq").write_bytes(tree.to_bytes())
single = SingleNodeTree.from_shape("node:5 process:2")
(out / "names.bin").write_bytes(SystemTree.from_single(single, names="all").names_to_bytes(2))
PY
"$FUZZER" -seed="$LIBFUZZER_SEED" -max_total_time="$SECONDS_TO_RUN" -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
  -print_final_stats=1 "$OUT/systree_corpus" "$OUT/systree_seeds" 2>&1 | tail -n 12
echo "systree fuzz: no findings in ${SECONDS_TO_RUN}s"
