"""Test helpers: a .cubex file's tar members and an archive rebuilt from (damaged) members."""

from __future__ import annotations

import io
import tarfile


def read_members(path: str) -> dict[str, bytes]:
    """The tar members of `path`, read by hand: tarfile refuses the file with wrong checksums."""
    data, members, offset = open(path, "rb").read(), {}, 0
    while offset + 512 <= len(data) and data[offset:offset + 512].strip(b"\0"):
        header = data[offset:offset + 512]
        size = int(header[124:136].strip(b"\0 ") or b"0", 8)
        members[header[:100].rstrip(b"\0").decode()] = data[offset + 512:offset + 512 + size]
        offset += 512 + (size + 511) // 512 * 512
    return members


def archive(members: dict[str, bytes]) -> bytes:
    """A ustar archive of `members`, in their order."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()
