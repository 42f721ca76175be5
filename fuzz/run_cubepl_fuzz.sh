#!/usr/bin/env bash
# Fuzzes CubePL (derived metrics) for SECONDS (default 60) under libFuzzer + ASan + UBSan and
# exits non-zero on any finding (see cubepl_fuzz.cpp). Seeds: every <cubepl> / <cubeplinit>
# program of the specs in ../shared/data/cubepl and of the remapping.spec members of the
# shared reports, and small anchor.xml files holding derived metrics with those programs
# (first seed byte: 0 program, 1 anchor.xml). Compiling the real specs' long regular expressions
# under ASan takes seconds, hence the longer per-input timeout.
set -euo pipefail
SECONDS_TO_RUN=${1:-60}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/fuzz/seed.sh"
OUT=${FUZZ_BUILD_DIR:-$ROOT/build/fuzz}
DATA=${CUBESCALE_SHARED_DATA:-$ROOT/../shared/data}
SEEDS="$OUT/cubepl_seeds"
mkdir -p "$OUT/cubepl_corpus" "$SEEDS"

python3 - "$DATA" "$SEEDS" <<'PY'
import html, re, sys
from pathlib import Path
data, seeds = Path(sys.argv[1]), Path(sys.argv[2])


def embedded_specs():
    """The remapping.spec members that Score-P stores in its reports (tar walked by hand)."""
    for path in sorted((data / "cubex").glob("*.cubex")):
        raw, offset = path.read_bytes(), 0
        while offset + 512 <= len(raw) and raw[offset:offset + 512].strip(b"\0"):
            header = raw[offset:offset + 512]
            size = int(header[124:136].strip(b"\0 ") or b"0", 8)
            if header[:100].rstrip(b"\0") == b"remapping.spec":
                yield raw[offset + 512:offset + 512 + size].decode(errors="replace")
            offset += 512 + (size + 511) // 512 * 512


anchor = ('<cube version="4.4"><metrics><metric id="0" type="EXCLUSIVE"><uniq_name>time</uniq_name>'
          '<dtype>DOUBLE</dtype></metric>{}</metrics><program>'
          '<region id="0" mod="MPI" begin="0" end="0"><name>MPI_Send</name><descr>MPI</descr></region>'
          '<region id="1" mod="" begin="0" end="0"><name>TRACE BUFFER FLUSH</name><descr>EPIK</descr></region>'
          '<cnode id="0" calleeId="0"><cnode id="1" calleeId="1"/></cnode></program><system>'
          '<systemtreenode Id="0"><name>m</name><class>machine</class><locationgroup Id="0"><name>p</name>'
          '<rank>0</rank><type>process</type><location Id="0"><name>t</name><rank>0</rank><type>thread</type>'
          '</location></locationgroup></systemtreenode></system></cube>')
n = 0
for text in [p.read_text() for p in sorted((data / "cubepl").glob("*.spec"))] + list(embedded_specs()):
    for kind, body in re.findall(r'<metric\s+type="([A-Z_]+)">(.*?)(?=<metric|</metric>)', text, re.S):
        cubepl = re.search(r"<cubepl>(.*?)</cubepl>", body, re.S)
        init = re.search(r"<cubeplinit>(.*?)</cubeplinit>", body, re.S)
        if not cubepl:
            continue
        for program in filter(None, (cubepl.group(1), init and init.group(1))):
            (seeds / f"program{n}").write_bytes(b"\0" + program.encode())
            n += 1
        metric = (f'<metric id="1" type="{kind}"><uniq_name>d</uniq_name><dtype>DOUBLE</dtype>'
                  f'<cubepl>{html.escape(cubepl.group(1), quote=False)}</cubepl>'
                  + (f'<cubeplinit>{html.escape(init.group(1), quote=False)}</cubeplinit>' if init else "")
                  + "</metric>")
        (seeds / f"anchor{n}").write_bytes(b"\1" + anchor.format(metric).encode())
        n += 1
PY

CXX=${FUZZ_CXX:-clang++-14}
if command -v "$CXX" >/dev/null; then
  . "$ROOT/fuzz/build.sh"
  FUZZER=$(fuzz_build cubepl_fuzz)
  "$FUZZER" -seed="$LIBFUZZER_SEED" -max_total_time="$SECONDS_TO_RUN" -max_len=200000 -timeout=60 -rss_limit_mb=4096 \
    -artifact_prefix="$OUT/cubepl-" -print_final_stats=1 "$OUT/cubepl_corpus" "$SEEDS" 2>&1 | tail -n 12
  echo "cubepl fuzz (libFuzzer, ASan/UBSan): no findings in ${SECONDS_TO_RUN}s"
else
  echo "cubepl fuzz: $CXX not found, libFuzzer run skipped"
fi
