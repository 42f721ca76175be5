"""Counts a file announces are checked against what its bytes can hold before memory is
reserved (issue #30): each crafted input below, built from a shared report or trace, ends in
a FormatError within a second of CPU time in a process limited to 256 MiB of address space
(Python with NumPy and pandas takes about 160 MiB of it). Before, the padded system member took 4.4 GB,
the gzip bomb 4 GB (MemoryError), the forged event count an allocation of 8.6 GB."""

from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import pytest
from tar_members import archive, read_members

import cubescale
from cubescale.systree import SystemTree

LIMIT = 256 << 20

# Reads one input as a user would, under the limit; prints what happened as JSON.
_CHILD = r"""
import json, resource, sys, time
resource.setrlimit(resource.RLIMIT_AS, (int(sys.argv[3]), int(sys.argv[3])))
import cubescale
from cubescale._core import cube as _cube
kind, path = sys.argv[1], sys.argv[2]
start = time.process_time()  # CPU time: other processes on the machine do not count
try:
    if kind == "cubex":
        _cube.load_all(_cube.open_cubex(path))
    else:
        import cubescale.trace
        cubescale.trace.events(path)
    out = {"error": None}
except cubescale.FormatError as e:
    out = {"error": "FormatError", "member": e.member, "offset": e.offset, "message": str(e)}
except MemoryError as e:
    out = {"error": "MemoryError", "message": str(e)}
out["seconds"] = time.process_time() - start
print(json.dumps(out))
"""


def _read_limited(kind: str, path: Path) -> dict:
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    done = subprocess.run([sys.executable, "-c", _CHILD, kind, str(path), str(LIMIT)], capture_output=True,
                          text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


def _refused(kind: str, path: Path, member: str) -> dict:
    result = _read_limited(kind, path)
    assert result["error"] == "FormatError", result
    assert result["member"] == member, result
    assert result["seconds"] < 1.0, result
    return result


# Deflate's largest ratio: 1 MiB of zeros compresses to 1,037 bytes, and after a full flush
# every further MiB to the same bytes, so a bomb of any size is built by repetition.
_MIB = bytes(1 << 20)


def _deflated_zeros(mib: int) -> bytes:
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    first = c.compress(_MIB) + c.flush(zlib.Z_FULL_FLUSH)
    again = c.compress(_MIB) + c.flush(zlib.Z_FULL_FLUSH)
    return first + again * (mib - 1) + b"\x03\x00"  # an empty final block ends the stream


@pytest.fixture(scope="module")
def gzip_bomb() -> bytes:
    """4 MiB of gzip that inflates to 4 GiB of zeros (a valid gzip member)."""
    crc = 0
    for _ in range(4096):
        crc = zlib.crc32(_MIB, crc)
    header = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff"
    return header + _deflated_zeros(4096) + struct.pack("<II", crc, (4096 << 20) & 0xFFFFFFFF)


def _zlib_zeros(mib: int) -> bytes:
    n = mib << 20
    adler = ((n % 65521) << 16) | 1  # adler-32 of n zero bytes
    return b"\x78\xda" + _deflated_zeros(mib) + struct.pack(">I", adler)


def test_the_limit_lets_a_real_report_load(shared_data, tmp_path):
    # The control: the largest shared report loads whole under the same limit.
    result = _read_limited("cubex", shared_data / "cubex" / "cubelib_example.p64.cubex")
    assert result["error"] is None, result


def test_a_padded_system_member_claiming_120_million_locations(shared_data, tmp_path):
    written = tmp_path / "written.cubex"
    cubescale.write(cubescale.open(shared_data / "cubex" / "bt-mz.B.8x4.cubex"), written)
    members = read_members(str(written))
    tree = SystemTree.from_shape("node:1000 process:1000 thread:120")
    assert tree.count("locations") == 120_000_000
    seq, names = tree.to_bytes(), tree.names_to_bytes()
    member = (b"CUBESCALE.SYSTREE" + struct.pack("<HQ", 1, len(seq)) + seq + struct.pack("<Q", len(names)) + names
              + b"\0")
    members["cubescale.systree"] = member + bytes((2 << 20) - len(member))  # padding, as the issue's
    path = tmp_path / "padded.cubex"
    path.write_bytes(archive(members))
    assert 2 << 20 < path.stat().st_size < 3 << 20
    result = _refused("cubex", path, "cubescale.systree")
    assert "expands to 120000000 locations, anchor.xml's <system> at byte" in result["message"]


def test_a_gzip_bomb_as_anchor_xml(shared_data, tmp_path, gzip_bomb):
    assert zlib.decompressobj(31).decompress(gzip_bomb, 1 << 20) == _MIB  # it is gzip of zeros
    members = read_members(str(shared_data / "cubex" / "mm.zcubex.cubex"))
    assert members["anchor.xml"][:2] == b"\x1f\x8b"  # this report's anchor is gzipped
    members["anchor.xml"] = gzip_bomb
    path = tmp_path / "bomb.cubex"
    path.write_bytes(archive(members))
    result = _refused("cubex", path, "anchor.xml")
    assert "inflates to more than" in result["message"]


def test_a_zcubex_bomb_as_data_member(shared_data, tmp_path):
    stream = _zlib_zeros(4096)  # 4 GiB of rows in 4 MiB
    assert zlib.decompressobj().decompress(stream, 1 << 20) == _MIB
    members = read_members(str(shared_data / "cubex" / "mm.zcubex.cubex"))
    assert members["0.data"].startswith(b"ZCUBEX.DATA")
    members["0.data"] = b"ZCUBEX.DATA" + struct.pack("<4Q", 1, 0, 0, len(stream)) + stream
    path = tmp_path / "bomb.cubex"
    path.write_bytes(archive(members))
    result = _refused("cubex", path, "0.data")
    assert "inflate to more than" in result["message"]


def test_definitions_announcing_150_million_events(shared_data, tmp_path):
    d = tmp_path / "jacobi"
    shutil.copytree(shared_data / "otf2" / "jacobi-hybrid", d)
    for p in d.rglob("*"):
        os.chmod(p, 0o755 if p.is_dir() else 0o644)
    defs = (d / "traces.def").read_bytes()
    # Location 0's record (type 0x0e, length 9): self, name, type, 72,418 events in 3 bytes,
    # group. The forged one announces 150,000,000 in 4 bytes, one more in the record.
    record = bytes.fromhex("0e 09 00 01 07 01 03 e2 1a 01 00")
    assert defs.count(record) == 1
    forged = bytes.fromhex("0e 0a 00 01 07 01 04") + (150_000_000).to_bytes(4, "little") + b"\0"
    (d / "traces.def").write_bytes(defs.replace(record, forged))
    result = _refused("otf2", d / "traces.otf2", "traces/0.evt")
    assert "announce 150000000 events, the file can hold at most 940942" in result["message"]
