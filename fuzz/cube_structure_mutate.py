"""Structural mutation fuzzing of the .cubex reader: the shared reports (as they are and as
our writer writes them, with the compact system member) with whole members removed,
duplicated, renamed or swapped, ids duplicated in anchor.xml, and counts inflated (index
counts, ZCUBEX tables, sequence records, padded members, gzipped padding), where the
byte-level fuzzers (run_cube_fuzz.sh) rarely get: they change bytes, not the archive's shape.

Every case runs in a child process limited to 512 MiB of address space (several cases per
child), which opens the file, loads every metric and reads the regions. A finding is
  * a crash, a hang (120 s a child), an exception other than FormatError, a MemoryError
    (inflation: a few MB of input must not take more than a few hundred MB), or
  * a silent misread: the child read a file that an oracle computed from the mutated archive
    knows to be inconsistent (anchor.xml missing, a report member named twice, a member name
    that is not UTF-8, N.index without N.data or the reverse, a metric, region, cnode or
    location id named twice).
A finding is kept as ``OUT/cube-structure-finding-<seed>-<case>.cubex`` with the command that
reproduces it; FUZZ_KEEP_GOING=1 counts the findings by kind instead of stopping at the first.

    python3 fuzz/cube_structure_mutate.py SECONDS [OUT]          # seed 1, as in CI
    FUZZ_SEED=random python3 fuzz/cube_structure_mutate.py 600    # explore
"""

from __future__ import annotations

import collections
import gzip
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CASES_PER_CHILD = 16
MEMORY_LIMIT = 512 << 20

# The child: reads each file as a user would; prints one line per case.
CHILD = r"""
import faulthandler, resource, sys
faulthandler.enable()
resource.setrlimit(resource.RLIMIT_AS, (int(sys.argv[1]), int(sys.argv[1])))
import cubescale
from cubescale._core import cube as _core
for path in sys.argv[2:]:
    try:
        raw = _core.open_cubex(path)
        _core.load_all(raw)
        report = cubescale.Report(raw)
        _ = report.cnodes, report.locations
        for metric in report.metrics:
            try:
                report.values(metric, inclusive=None)
            except ValueError as e:  # a derived metric outside the CubePL subset: documented
                if not (metric.derived and str(e).startswith("derived metric")):
                    raise
        print("read", flush=True)
    except cubescale.FormatError as e:
        print("refused", e.member, flush=True)
"""

Member = tuple[bytes, bytes]  # (name, data): names are bytes, as in the tar header
VALUE = re.compile(rb"^(\d+)\.(index|data)$")
REPORT_NAMES = (b"anchor.xml", b"cubescale.systree")


# ------------------------------------------------------------------------------ tar

def unpack(raw: bytes) -> list[Member]:
    members, offset = [], 0
    while offset + 512 <= len(raw) and raw[offset:offset + 512].strip(b"\0"):
        header = raw[offset:offset + 512]
        size = int(header[124:136].strip(b"\0 ") or b"0", 8)
        members.append((header[:100].rstrip(b"\0"), raw[offset + 512:offset + 512 + size]))
        offset += 512 + (size + 511) // 512 * 512
    return members


def header(name: bytes, size: int) -> bytes:
    h = bytearray(512)
    h[:len(name)] = name[:100]
    h[100:108] = b"0000644\0"
    h[108:116] = h[116:124] = b"0000000\0"
    h[124:136] = b"%011o\0" % size
    h[136:148] = b"00000000000\0"
    h[148:156] = b" " * 8
    h[156:157] = b"0"
    h[257:265] = b"ustar\x0000"
    h[148:156] = b"%06o\0 " % sum(h)
    return bytes(h)


def pack(members: list[Member]) -> bytes:
    out = bytearray()
    for name, data in members:
        out += header(name, len(data)) + data + bytes(-len(data) % 512)
    return bytes(out + bytes(1024))


# ------------------------------------------------------------------------------ the oracle

def anchor_text(members: list[Member]) -> bytes | None:
    data = next((d for n, d in members if n == b"anchor.xml"), None)
    if data is not None and data[:2] == b"\x1f\x8b":
        try:
            return gzip.decompress(data[:1 << 24])
        except Exception:
            return None
    return data


ID_PATTERNS = {
    "metric": re.compile(rb"<metric\b[^>]*?\bid=\"(\d+)\""),
    "region": re.compile(rb"<region\b[^>]*?\bid=\"(\d+)\""),
    "cnode": re.compile(rb"<cnode\b[^>]*?\bid=\"(\d+)\""),
    "location": re.compile(rb"<location\b[^>]*?\bId=\"(\d+)\""),
}


def must_refuse(members: list[Member]) -> str | None:
    """Why the archive is inconsistent in a way the reader must refuse, or None."""
    names = [n for n, _ in members]
    for n in names:
        try:
            n.decode("utf-8")
        except UnicodeDecodeError:
            return f"member name {n!r} is not UTF-8"
    if b"anchor.xml" not in names:
        return "no anchor.xml"
    counts = collections.Counter(names)
    for n, k in counts.items():
        if k > 1 and (n in REPORT_NAMES or VALUE.match(n)):
            return f"{n.decode()} named {k} times"
    ids = {(m.group(1), m.group(2)) for n in names if (m := VALUE.match(n))}
    for number, kind in ids:
        other = b"data" if kind == b"index" else b"index"
        if (number, other) not in ids:
            return f"{number.decode()}.{kind.decode()} without {other.decode()}"
    text = anchor_text(members)
    if text is not None:
        for what, pattern in ID_PATTERNS.items():
            if what == "location" and b"cubescale.systree" in names:
                continue  # the system member replaces anchor.xml's system tree (its Ids are not read)
            seen = collections.Counter(pattern.findall(text))
            twice = [i for i, k in seen.items() if k > 1]
            if twice:
                return f"{what} id {twice[0].decode()} named twice in anchor.xml"
    return None


# ------------------------------------------------------------------------------ mutations

def m_remove(ms: list[Member], rng: random.Random) -> str:
    i = rng.randrange(len(ms))
    name = ms.pop(i)[0]
    return f"removed {name!r}"


def m_duplicate(ms: list[Member], rng: random.Random) -> str:
    i = rng.randrange(len(ms))
    j = rng.randrange(len(ms) + 1)
    ms.insert(j, ms[i])
    return f"duplicated {ms[i if i < j else i + 1][0]!r} at {j}"


def m_rename(ms: list[Member], rng: random.Random) -> str:
    i = rng.randrange(len(ms))
    name, data = ms[i]
    m = VALUE.match(name)
    choice = rng.randrange(4)
    if choice == 0 or not m:  # a byte that is not UTF-8 (a flipped bit of a letter)
        at = rng.randrange(len(name)) if name else 0
        new = name[:at] + bytes([name[at] | 0x80 if name else 0xE1]) + name[at + 1:]
    elif choice == 1:  # index <-> data
        new = m.group(1) + (b".data" if m.group(2) == b"index" else b".index")
    elif choice == 2:  # another metric's id
        new = str(rng.randrange(int(m.group(1)) + 3)).encode() + b"." + m.group(2)
    else:
        new = rng.choice([b"anchor.xml", b"cubescale.systree", b"remapping.spec", name + b".bak"])
    ms[i] = (new, data)
    return f"renamed {name!r} to {new!r}"


def m_swap(ms: list[Member], rng: random.Random) -> str:
    i, j = rng.randrange(len(ms)), rng.randrange(len(ms))
    (a, da), (b, db) = ms[i], ms[j]
    ms[i], ms[j] = (a, db), (b, da)
    return f"swapped the contents of {a!r} and {b!r}"


def m_reorder(ms: list[Member], rng: random.Random) -> str:
    rng.shuffle(ms)
    return "shuffled the members"


def m_duplicate_id(ms: list[Member], rng: random.Random) -> str:
    i = next((k for k, (n, _) in enumerate(ms) if n == b"anchor.xml"), None)
    text = anchor_text(ms)
    if i is None or text is None:
        return "no readable anchor.xml: unchanged"
    attr = rng.choice([rb"<metric\b[^>]*?\bid=\"(\d+)\"", rb"<region\b[^>]*?\bid=\"(\d+)\"",
                       rb"<cnode\b[^>]*?\bid=\"(\d+)\"", rb"<location\b[^>]*?\bId=\"(\d+)\"",
                       rb"<systemtreenode\b[^>]*?\bId=\"(\d+)\"", rb"<locationgroup\b[^>]*?\bId=\"(\d+)\""])
    found = list(re.finditer(attr, text))
    if len(found) < 2:
        return "no two elements of a kind: unchanged"
    a, b = rng.sample(found, 2)
    text = text[:b.start(1)] + a.group(1) + text[b.end(1):]
    ms[i] = (b"anchor.xml", text)
    return f"id {b.group(1).decode()} at byte {b.start(1)} of anchor.xml set to {a.group(1).decode()}"


def m_duplicate_element(ms: list[Member], rng: random.Random) -> str:
    i = next((k for k, (n, _) in enumerate(ms) if n == b"anchor.xml"), None)
    text = anchor_text(ms)
    if i is None or text is None:
        return "no readable anchor.xml: unchanged"
    tag = rng.choice([b"location", b"metric", b"region", b"locationgroup"])
    found = list(re.finditer(rb"<" + tag + rb"\b.*?</" + tag + rb">", text, re.S))
    if not found:
        return f"no <{tag.decode()}>: unchanged"
    e = rng.choice(found)
    copies = rng.choice([1, 2, 1000])
    text = text[:e.end()] + e.group(0) * copies + text[e.end():]
    ms[i] = (b"anchor.xml", text)
    return f"<{tag.decode()}> at byte {e.start()} of anchor.xml repeated {copies} times"


def _set_u(data: bytes, at: int, width: int, value: int, big: bool = False) -> bytes:
    return data[:at] + value.to_bytes(width, "big" if big else "little") + data[at + width:]


def m_inflate_count(ms: list[Member], rng: random.Random) -> str:
    candidates = [k for k, (n, d) in enumerate(ms) if VALUE.match(n) or n in REPORT_NAMES]
    if not candidates:
        return "nothing to inflate: unchanged"
    i = rng.choice(candidates)
    name, data = ms[i]
    big = rng.choice([2, 1000, 1 << 20, (1 << 32) - 1])
    if name.endswith(b".index") and len(data) >= 22 and data[17] == 1:
        n = int.from_bytes(data[18:22], "little")
        ms[i] = (name, _set_u(data, 18, 4, min(n * big, (1 << 32) - 1)))
        return f"{name!r}: index count {n} inflated"
    if name.endswith(b".data") and data.startswith(b"ZCUBEX.DATA") and len(data) >= 19:
        at = rng.choice([11] + [19 + 24 * k + 16 for k in range(int.from_bytes(data[11:19], "little"))][:4])
        if at + 8 <= len(data):
            value = int.from_bytes(data[at:at + 8], "little")
            ms[i] = (name, _set_u(data, at, 8, min(max(value, 1) * big, (1 << 64) - 1)))
            return f"{name!r}: ZCUBEX field at {at} ({value}) inflated"
    if name == b"cubescale.systree":
        if rng.random() < 0.5:
            ms[i] = (name, data + bytes(rng.choice([1, 4096, 2 << 20])))
            return f"{name!r} padded"
        at = rng.randrange(27, len(data)) if len(data) > 27 else 0
        ms[i] = (name, data[:at] + bytes([rng.randrange(256)]) + data[at + 1:])
        return f"{name!r}: byte {at} (a record's count?) changed"
    if name == b"anchor.xml":
        text = anchor_text(ms) or data
        pad = b" " * rng.choice([1 << 20, 64 << 20])
        ms[i] = (name, gzip.compress(text.replace(b"</cube>", pad + b"</cube>"), 9))
        return f"{name!r} gzipped with {len(pad)} bytes of padding"
    if name.endswith(b".data"):  # CUBEX.DATA: rows appended
        ms[i] = (name, data + bytes(min(len(data), 1 << 20) * rng.choice([1, 3])))
        return f"{name!r}: rows appended"
    return "nothing to inflate: unchanged"


MUTATIONS = [m_remove, m_duplicate, m_rename, m_swap, m_reorder, m_duplicate_id, m_duplicate_element,
             m_inflate_count]


def mutate(source: list[Member], rng: random.Random) -> tuple[list[Member], str]:
    ms = list(source)
    done = []
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        if not ms:
            break
        mutation = rng.choice(MUTATIONS)
        done.append(f"{mutation.__name__[2:]}: {mutation(ms, rng)}")
    return ms, "; ".join(done)


# ------------------------------------------------------------------------------ driver

def sources(data: Path, work: Path) -> dict[str, list[Member]]:
    """The shared reports, and each as our writer writes it (with cubescale.systree)."""
    out = {p.name: unpack(p.read_bytes()) for p in sorted(data.glob("*.cubex")) if p.stat().st_size < (8 << 20)}
    script = ("import sys, cubescale\n"
              "for src, dst in zip(sys.argv[1::2], sys.argv[2::2]):\n"
              "    try:\n"
              "        cubescale.write(cubescale.open(src), dst)\n"
              "    except Exception as e:\n"
              "        print(src, e, file=sys.stderr)\n")
    pairs = []
    for name in out:
        pairs += [str(data / name), str(work / f"written.{name}")]
    subprocess.run([sys.executable, "-c", script, *pairs], check=True, timeout=600)
    for name in list(out):
        if (work / f"written.{name}").exists():
            out[f"written.{name}"] = unpack((work / f"written.{name}").read_bytes())
    return out


def main(argv: list[str]) -> int:
    seconds = float(argv[0]) if argv else 60.0
    out = Path(argv[1]) if len(argv) > 1 else Path("build/fuzz")
    data = Path(os.environ.get("CUBESCALE_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))
    chosen = os.environ.get("FUZZ_SEED", "1")
    seed = time.time_ns() % 1_000_000_007 if chosen == "random" else int(chosen)
    rng = random.Random(seed)
    start = time.monotonic()
    cases = 0
    outcomes: collections.Counter[str] = collections.Counter()
    findings: collections.Counter[str] = collections.Counter()
    # FUZZ_KEEP_GOING=1 counts findings by kind instead of stopping at the first (to measure
    # a reader, e.g. an older one).
    keep_going = os.environ.get("FUZZ_KEEP_GOING") == "1"
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        reports = sources(data / "cubex", work)
        if not reports:
            print(f"cube structure fuzz: no reports under {data}/cubex, skipped")
            return 0
        names = sorted(reports)
        end = start + seconds
        while time.monotonic() < end:
            batch = []
            for k in range(CASES_PER_CHILD):
                source = rng.choice(names)
                members, what = mutate(reports[source], rng)
                path = work / f"case{k}.cubex"
                path.write_bytes(pack(members))
                batch.append((path, f"{source}: {what}", must_refuse(members)))
            try:
                done = subprocess.run([sys.executable, "-c", CHILD, str(MEMORY_LIMIT), *(str(p) for p, _, _ in batch)],
                                      capture_output=True, text=True, timeout=120,
                                      env=dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1"))
                lines, failed = done.stdout.splitlines(), done.returncode != 0
                detail = f"{done.stderr[-3000:]}\nexit status {done.returncode}"
            except subprocess.TimeoutExpired as e:
                partial = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
                lines, failed, detail = partial.splitlines(), True, "timed out after 120 s (a hang)"
            bad = min(len(lines), len(batch) - 1) if failed else None
            kind = "crash, hang or exception" if failed else ""
            if failed and "MemoryError" in detail:
                kind = "MemoryError"
            for k, line in enumerate(lines):
                outcomes[line.split()[0]] += 1
                reason = batch[k][2]
                if line == "read" and reason:
                    bad, detail = k, f"read without an error, but {reason} (a silent misread)"
                    kind = "silent misread: " + re.sub(r"\d+", "N", re.sub(r"b'[^']*'", "<name>", reason))
                    break
            if bad is not None:
                path, what, _ = batch[bad]
                keep = out / f"cube-structure-finding-{seed}-{cases + bad}.cubex"
                out.mkdir(parents=True, exist_ok=True)
                keep.write_bytes(path.read_bytes())
                print(f"cube structure fuzz: FINDING (seed {seed}) in {what}\n{detail}\nkept in {keep}; reproduce: "
                      f"python3 -c '{CHILD.strip()}' {MEMORY_LIMIT} {keep}")
                if not keep_going:
                    return 1
                findings[kind] += 1
                cases += bad + 1  # the cases after it in this child were not read
                continue
            cases += len(batch)
    if findings:
        print(f"cube structure fuzz (seed {seed}): {sum(findings.values())} findings in {cases} cases, "
              f"{time.monotonic() - start:.0f}s: " + ", ".join(f"{k} x{n}" for k, n in findings.most_common()))
        return 1
    print(f"cube structure fuzz (seed {seed}): no findings in {cases} cases "
          f"({outcomes['read']} read, {outcomes['refused']} refused), {time.monotonic() - start:.0f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
