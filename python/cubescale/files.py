"""How cubescale writes files: whole or not at all, whoever else writes or plants links.

Every file goes to a temporary beside its target, created exclusively (``O_CREAT | O_EXCL |
O_NOFOLLOW``, mode 0644 minus the umask) under a name nobody else uses, is flushed and
fsynced, and is renamed over the target; then the directory is fsynced. Any error removes the
temporary. Reports are written this way by the C++ core (``cpp/include/cubescale/common/
atomic_file.hpp``); :func:`atomic_write` is its twin for files written from Python, with the
same flags and the same names::

    .<target name>.cubescale-tmp.<host>.<pid>.<16 hex digits>

A writer killed by SIGKILL leaves its temporary behind; :func:`stale_temporaries` finds the
ones whose process is gone (``cubescale clean DIR`` removes them). A traced run writes its
OTF2 archive into ``<trace>.partial/`` and renames it when every rank is done; each rank records
its host and pid there (:func:`record_partial_writer`), so that a run whose rank died (SIGKILL,
``MPI.Abort``) leaves a folder :func:`stale_partial_traces` recognizes once no writer lives.

Example
-------
>>> import os, tempfile
>>> from cubescale import files
>>> d = tempfile.mkdtemp()
>>> files.write_text(os.path.join(d, "notes.txt"), "complete or absent\\n")
>>> os.listdir(d)
['notes.txt']
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import os
import re
import secrets
import socket
import stat
from collections.abc import Iterator
from typing import IO, Any

__all__ = ["PartialTrace", "Temporary", "atomic_write", "check_target", "parse_temporary_name", "partial_traces",
           "record_partial_writer", "stale_partial_traces", "stale_temporaries", "temporaries",
           "temporary_name", "write_bytes", "write_text"]

MARKER = ".cubescale-tmp."
"""What every temporary's name holds between the target's name and its writer."""

_KEPT_TARGET_BYTES = 150  # as in atomic_file.cpp: the rest of the name fits NAME_MAX (255)
_ATTEMPTS = 64  # names drawn before giving up on EEXIST
_FLAGS = os.O_CREAT | os.O_EXCL | os.O_WRONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
_NAME = re.compile(r"\.(?P<target>.*)\.cubescale-tmp\.(?P<host>[A-Za-z0-9-]+)\.(?P<pid>[0-9]+)\.[0-9a-f]{16}",
                   re.DOTALL)
_PID_MAX = 1 << 22  # Linux's largest pid_max
_SLACK_SECONDS = 2.0  # process start times from /proc are whole seconds + clock ticks


def _host() -> str:
    host = re.sub(r"[^A-Za-z0-9-]", "-", socket.gethostname()[:64])
    return host or "-"


def temporary_name(target_name: str, pid: int | None = None, host: str | None = None) -> str:
    """The file name of a new temporary for the file ``target_name`` (no directory).

    ``pid`` and ``host`` default to this process and this host.

    Example
    -------
    >>> name = temporary_name("run.cubex", pid=4242, host="node7")
    >>> name[:-16]
    '.run.cubex.cubescale-tmp.node7.4242.'
    >>> parse_temporary_name(name)
    ('run.cubex', 'node7', 4242)
    """
    encoded = os.fsencode(target_name)
    cut = min(len(encoded), _KEPT_TARGET_BYTES)
    while 0 < cut < len(encoded) and encoded[cut] & 0xC0 == 0x80:  # at a UTF-8 character boundary
        cut -= 1
    kept = encoded[:cut]
    return (f".{os.fsdecode(kept)}{MARKER}{_host() if host is None else host}."
            f"{os.getpid() if pid is None else pid}.{secrets.token_hex(8)}")


def parse_temporary_name(name: str) -> tuple[str, str, int] | None:
    """``(target name, host, pid)`` of a temporary's file name, or None if it is not one.

    Example
    -------
    >>> parse_temporary_name(".a.cubex.cubescale-tmp.login1.77.0123456789abcdef")
    ('a.cubex', 'login1', 77)
    >>> parse_temporary_name("a.cubex") is None
    True
    """
    match = _NAME.fullmatch(name)
    if not match:
        return None
    return match["target"], match["host"], int(match["pid"])


@contextlib.contextmanager
def atomic_write(path: str | os.PathLike[str], mode: str = "wb", encoding: str | None = None) -> Iterator[IO[Any]]:
    """Open a temporary for writing ``path``; on success it replaces ``path``, on error it is removed.

    ``mode`` is ``"wb"`` or ``"w"`` (text, UTF-8 unless ``encoding``). A symlink at ``path``
    is replaced, as ``mv`` does; its target is never written. Errors are :class:`OSError` with
    errno, naming ``path``.

    Example
    -------
    >>> import os, tempfile
    >>> d = tempfile.mkdtemp()
    >>> with atomic_write(os.path.join(d, "tree.json"), "w") as f:
    ...     _ = f.write('{"machine": 1}')
    >>> open(os.path.join(d, "tree.json")).read()
    '{"machine": 1}'
    >>> with atomic_write(os.path.join(d, "half.bin")) as f:
    ...     _ = f.write(b"half")
    ...     raise ValueError("the data turned out wrong")
    Traceback (most recent call last):
    ValueError: the data turned out wrong
    >>> sorted(os.listdir(d))
    ['tree.json']
    """
    if mode not in ("wb", "w"):
        raise ValueError(f"atomic_write: mode must be 'wb' or 'w', not {mode!r}")
    target = os.fspath(path)
    directory, name = os.path.split(target)
    _check_target(target)
    fd, temporary = _create_temporary(target, directory, name)
    try:
        with os.fdopen(fd, mode, encoding=(encoding or "utf-8") if mode == "w" else None) as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        _renamed(temporary, target)
    except BaseException as e:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        if isinstance(e, OSError) and e.errno is not None and e.filename is None:
            e.filename = target  # a full disk while writing: say where
        raise
    _sync_directory(directory, target)


def _create_temporary(target: str, directory: str, name: str) -> tuple[int, str]:
    for _ in range(_ATTEMPTS):
        temporary = os.path.join(directory, temporary_name(name))
        try:
            return os.open(temporary, _FLAGS, 0o644), temporary
        except FileExistsError:  # a planted file or link, or (never in practice) another writer's name
            continue
        except OSError as e:
            raise OSError(e.errno, e.strerror, target) from None
    raise FileExistsError(errno.EEXIST, "no unused temporary name", target)


# As the C++ writer (common/atomic_file.hpp) says of a device, FIFO or socket at the target.
NOT_A_REGULAR_FILE = "not a regular file (a device, FIFO or socket), which writing would replace"


def _check_target(target: str) -> None:
    """Refuses a target the rename would replace by a file: a directory (EISDIR), a device, FIFO
    or socket (as root, renaming over ``/dev/null`` succeeds), or a symlink to one of them
    (``/dev/stdout`` is one). None yet, a regular file, a symlink to one or a dangling symlink
    (replaced, as ``mv`` does; its target never written) pass."""
    try:
        mode = os.lstat(target).st_mode
        if stat.S_ISLNK(mode):
            mode = os.stat(target).st_mode
    except OSError:
        return  # none yet, or a dangling symlink; creating the temporary and renaming report other errors
    if stat.S_ISREG(mode):
        return
    if stat.S_ISDIR(mode):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), target)
    raise FileExistsError(errno.EEXIST, NOT_A_REGULAR_FILE, target)


def check_target(path: str | os.PathLike[str]) -> None:
    """Raises now what writing ``path`` would raise at its end: an empty path or no such
    directory (``FileNotFoundError``), a file where its directory would be
    (``NotADirectoryError``), a directory it may not write in or on a read-only file system
    (``PermissionError``), a directory itself (``IsADirectoryError``), a device, FIFO or socket
    (``FileExistsError``); for work that writes only after hours.

    Example
    -------
    >>> check_target("/nonexistent/report.cubex")
    Traceback (most recent call last):
    FileNotFoundError: [Errno 2] no such directory for the output: '/nonexistent'
    """
    target = os.fspath(path)
    if not target:
        raise FileNotFoundError(errno.ENOENT, "an empty path for the output", target)
    directory = os.path.dirname(target) or "."
    if not os.path.isdir(directory):
        if os.path.exists(directory):
            raise NotADirectoryError(errno.ENOTDIR, "not a directory, where the output would go", directory)
        raise FileNotFoundError(errno.ENOENT, "no such directory for the output", directory)
    # The temporary is made in the directory and renamed there (atomic_write): both need to
    # write in it. access() says EROFS also to root, whom permissions do not stop.
    if not os.access(directory, os.W_OK | os.X_OK):
        if os.statvfs(directory).f_flag & os.ST_RDONLY:
            raise PermissionError(errno.EROFS, "a read-only file system, where the output would go", directory)
        raise PermissionError(errno.EACCES, "no permission to write in the output's directory", directory)
    _check_target(target)


def _renamed(temporary: str, target: str) -> None:
    _check_target(target)  # made meanwhile: the caller removes the temporary
    try:
        os.rename(temporary, target)
    except OSError as e:
        raise OSError(e.errno, e.strerror, target) from None


def _sync_directory(directory: str, target: str) -> None:
    """Make the rename durable; filesystems that cannot sync a directory say EINVAL."""
    fd = os.open(directory or ".", os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(fd)
    except OSError as e:
        if e.errno not in (errno.EINVAL, errno.ENOTSUP):
            raise OSError(e.errno, e.strerror, target) from None
    finally:
        os.close(fd)


def write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    """Write ``data`` to ``path`` through :func:`atomic_write`.

    Example
    -------
    >>> import os, tempfile
    >>> out = os.path.join(tempfile.mkdtemp(), "tree.bin")
    >>> write_bytes(out, b"\\x01\\x02")
    >>> open(out, "rb").read()
    b'\\x01\\x02'
    """
    with atomic_write(path) as f:
        f.write(data)


def write_text(path: str | os.PathLike[str], text: str, encoding: str = "utf-8") -> None:
    """Write ``text`` to ``path`` through :func:`atomic_write`.

    Example
    -------
    >>> import os, tempfile
    >>> out = os.path.join(tempfile.mkdtemp(), "tree.json")
    >>> write_text(out, "{}")
    >>> open(out).read()
    '{}'
    """
    with atomic_write(path, "w", encoding) as f:
        f.write(text)


@dataclasses.dataclass(frozen=True)
class Temporary:
    """A temporary file of cubescale's naming in a directory.

    Example
    -------
    >>> import os, tempfile
    >>> d = tempfile.mkdtemp()
    >>> with open(os.path.join(d, temporary_name("r.cubex", pid=1, host="elsewhere")), "wb") as f:
    ...     _ = f.write(b"12345")
    >>> [(t.target, t.host, t.pid, t.size) for t in temporaries(d)]
    [('r.cubex', 'elsewhere', 1, 5)]
    """

    path: str
    target: str  #: the target's file name (its first 150 bytes)
    host: str  #: the writer's host name, as :func:`temporary_name` spells it
    pid: int  #: the writer's process id on that host
    size: int  #: bytes
    mtime: float  #: last modification, seconds since the epoch


def temporaries(directory: str | os.PathLike[str]) -> list[Temporary]:
    """Every regular file of cubescale's temporary naming in ``directory``, by name.

    Symlinks and other non-regular files are never ours (we create regular files exclusively)
    and are left out.

    Example
    -------
    >>> import os, tempfile
    >>> d = tempfile.mkdtemp()
    >>> name = temporary_name("run.cubex", pid=7, host="node1")
    >>> open(os.path.join(d, name), "wb").close()
    >>> os.symlink("/etc/passwd", os.path.join(d, temporary_name("run.cubex", pid=7, host="node1")))
    >>> [os.path.basename(t.path) == name for t in temporaries(d)]
    [True]
    """
    found = []
    with os.scandir(directory) as entries:
        for entry in entries:
            parsed = parse_temporary_name(entry.name)
            if parsed is None or not entry.is_file(follow_symlinks=False):
                continue
            try:
                st = entry.stat(follow_symlinks=False)
            except FileNotFoundError:  # its writer renamed or removed it meanwhile
                continue
            found.append(Temporary(entry.path, *parsed, size=st.st_size, mtime=st.st_mtime))
    return sorted(found, key=lambda t: t.path)


def stale_temporaries(directory: str | os.PathLike[str]) -> list[Temporary]:
    """The temporaries in ``directory`` that no running writer will finish: safe to remove.

    A temporary is stale when it was written on this host and its process is gone (or a
    zombie), or that process id now belongs to a process started after the file was last
    written (the id was reused). Temporaries of other hosts cannot be judged from here and
    are never stale: their writers may still be running.

    Example
    -------
    >>> import os, subprocess, sys, tempfile
    >>> d = tempfile.mkdtemp()
    >>> gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
    ...                       capture_output=True, text=True).stdout
    >>> for pid in (int(gone), os.getpid()):  # a finished process, and this one
    ...     with open(os.path.join(d, temporary_name("run.cubex", pid=pid)), "wb") as f:
    ...         _ = f.write(b"half a report")
    >>> [(t.target, t.pid == int(gone), t.size) for t in stale_temporaries(d)]
    [('run.cubex', True, 13)]
    """
    host = _host()
    return [t for t in temporaries(directory) if t.host == host and _writer_gone(t)]


def _writer_gone(temporary: Temporary) -> bool:
    started = _process_start(temporary.pid)
    return started is None or started > temporary.mtime + _SLACK_SECONDS


def _process_start(pid: int) -> float | None:
    """When process ``pid`` started (seconds since the epoch); None if it is gone or a zombie.

    A live process whose start cannot be read (no /proc, ``hidepid``) counts as started at
    the epoch: its temporaries are never stale. So do impossible ids (0, above Linux's limit).
    """
    if not 0 < pid <= _PID_MAX:
        return 0.0
    try:
        os.kill(pid, 0)  # signal 0: only asks whether the process exists
    except ProcessLookupError:
        return None
    except PermissionError:  # someone else's process: alive
        pass
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            record = f.read()
        with open("/proc/stat", "rb") as f:
            boot = next(float(line.split()[1]) for line in f if line.startswith(b"btime "))
        fields = record[record.rindex(b")") + 2:].split()  # after "pid (comm) ": comm may hold spaces
        if fields[0] in (b"Z", b"X"):  # zombie or dead: it writes nothing more
            return None
        return boot + int(fields[19]) / os.sysconf("SC_CLK_TCK")
    except (OSError, StopIteration, ValueError, IndexError):
        return 0.0


# Unfinished traces: <trace>.partial/ holds one record per rank that writes it, named
# writer.<rank>, with the rank's host and pid ("<host> <pid>\n"), written before any event file.
PARTIAL_SUFFIX = ".partial"
_WRITER_RECORD = re.compile(r"writer\.[0-9]+")


@dataclasses.dataclass(frozen=True)
class PartialTrace:
    """A trace folder a traced run left unfinished (``<trace>.partial``) and its writers.

    Example
    -------
    >>> import os, tempfile
    >>> d = tempfile.mkdtemp()
    >>> record_partial_writer(os.path.join(d, "run-trace.partial"), rank=0, pid=1, host="node7")
    >>> [(t.target, t.writers, t.size) for t in partial_traces(d)]
    [('run-trace', (('node7', 1),), 8)]
    """

    path: str
    target: str  #: the trace folder's name once written
    writers: tuple[tuple[str, int], ...]  #: (host, pid) of every rank that writes it
    size: int  #: bytes of its files
    mtime: float  #: last modification of any of its files, seconds since the epoch


def record_partial_writer(partial: str | os.PathLike[str], rank: int, pid: int | None = None,
                          host: str | None = None) -> None:
    """Records in the unfinished trace folder ``partial`` (created if missing) that ``rank`` of
    the run, process ``pid`` on ``host`` (default: this process), writes it.

    Example
    -------
    >>> import os, tempfile
    >>> d = os.path.join(tempfile.mkdtemp(), "t.partial")
    >>> record_partial_writer(d, rank=3)
    >>> os.listdir(d)
    ['writer.3']
    """
    os.makedirs(partial, exist_ok=True)
    write_text(os.path.join(partial, f"writer.{int(rank)}"),
               f"{_host() if host is None else host} {os.getpid() if pid is None else pid}\n")


def partial_traces(directory: str | os.PathLike[str]) -> list[PartialTrace]:
    """Every unfinished trace folder (``*.partial`` holding writer records) in ``directory``.

    Example
    -------
    >>> import os, tempfile
    >>> d = tempfile.mkdtemp()
    >>> os.mkdir(os.path.join(d, "other.partial"))  # no writer records: not a trace of ours
    >>> partial_traces(d)
    []
    """
    found = []
    with os.scandir(directory) as entries:
        for entry in entries:
            if entry.name.endswith(PARTIAL_SUFFIX) and entry.is_dir(follow_symlinks=False):
                trace = _partial_trace(entry.path)
                if trace is not None:
                    found.append(trace)
    return sorted(found, key=lambda t: t.path)


def _partial_trace(path: str) -> PartialTrace | None:
    writers, size, mtime = [], 0, 0.0
    for root, folders, names in os.walk(path):
        folders[:] = [f for f in folders if not os.path.islink(os.path.join(root, f))]
        for name in names:
            full = os.path.join(root, name)
            try:
                st = os.lstat(full)
            except FileNotFoundError:
                continue
            size, mtime = size + st.st_size, max(mtime, st.st_mtime)
            if root == path and _WRITER_RECORD.fullmatch(name):
                writers.append(_writer(full))
    if not writers:
        return None
    name = os.path.basename(path)
    return PartialTrace(path, name[:-len(PARTIAL_SUFFIX)], tuple(writers), size, mtime)


def _writer(record: str) -> tuple[str, int]:
    """(host, pid) of a writer record; an unreadable one as a writer that cannot be judged."""
    try:
        with open(record, encoding="utf-8") as f:
            host, pid = f.read().split()
        return host, int(pid)
    except (OSError, ValueError, UnicodeDecodeError):
        return "?", 0


def stale_partial_traces(directory: str | os.PathLike[str]) -> list[PartialTrace]:
    """The unfinished trace folders in ``directory`` that no process will finish: every writer
    was on this host and is gone (or its pid now belongs to a process started after the folder
    was last written). One writer on another host, or still running, keeps it.

    Example
    -------
    >>> import os, subprocess, sys, tempfile
    >>> d = tempfile.mkdtemp()
    >>> gone = int(subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
    ...                           capture_output=True, text=True).stdout)
    >>> record_partial_writer(os.path.join(d, "dead-trace.partial"), rank=0, pid=gone)
    >>> record_partial_writer(os.path.join(d, "live-trace.partial"), rank=0)  # this process
    >>> [t.target for t in stale_partial_traces(d)]
    ['dead-trace']
    """
    host = _host()
    return [t for t in partial_traces(directory)
            if all(h == host and _pid_gone(pid, t.mtime) for h, pid in t.writers)]


def _pid_gone(pid: int, mtime: float) -> bool:
    started = _process_start(pid)
    return started is None or started > mtime + _SLACK_SECONDS
