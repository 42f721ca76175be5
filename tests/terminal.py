"""A command run with its stderr on a pseudo-terminal, as a user at a terminal runs it: what
the terminal received (status lines overwrite themselves there and only there)."""

from __future__ import annotations

import os
import subprocess


def stderr_on_a_terminal(command: list[str], timeout: float = 300) -> tuple[int, bytes]:
    """(exit status, the bytes the terminal received) of ``command`` with stderr on a pty."""
    master, slave = os.openpty()
    try:
        done = subprocess.run(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=slave, timeout=timeout)
        os.close(slave)
        terminal = b""
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # the terminal's other end is closed
                break
            if not chunk:
                break
            terminal += chunk
    finally:
        os.close(master)
    return done.returncode, terminal
