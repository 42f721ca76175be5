"""A command run with its stderr on a pseudo-terminal, as a user at a terminal runs it: what
the terminal received (status lines overwrite themselves there and only there)."""

from __future__ import annotations

import os
import select
import subprocess
import time


def stderr_on_a_terminal(command: list[str], timeout: float = 300) -> tuple[int, bytes]:
    """(exit status, the bytes the terminal received) of ``command`` with stderr on a pty
    (stdout discarded). The terminal is read while the command runs: a pty holds only a few
    KiB, and a command writing more would wait for a reader forever."""
    master, slave = os.openpty()
    try:
        process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=slave)
        os.close(slave)
        slave = -1
        terminal, deadline = b"", time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([master], [], [], left)[0]:
                process.kill()
                raise TimeoutError(f"{command[:4]} still ran after {timeout} s; the terminal had {terminal[-300:]!r}")
            try:
                chunk = os.read(master, 65536)
            except OSError:  # the terminal's other end is closed: the command ended
                break
            if not chunk:
                break
            terminal += chunk
        return process.wait(max(deadline - time.monotonic(), 1)), terminal
    finally:
        os.close(master)
        if slave >= 0:
            os.close(slave)
