"""Errors raised by cubescale.

Bad input never crashes the process: every parser raises :class:`FormatError`, a
:class:`ValueError` that names the file, the member inside it and the byte offset.
"""

from __future__ import annotations

# Errors a user causes (bad input, a missing file, a full disk or memory); anything else is a
# bug of cubescale and keeps its traceback on the command line.
USER_ERRORS: tuple[type[BaseException], ...] = (OSError, ValueError, KeyError, IndexError, OverflowError,
                                                MemoryError, ImportError)

__all__ = ["USER_ERRORS", "FormatError", "error_text"]


class FormatError(ValueError):
    """Malformed, truncated, hostile or unsupported input.

    Attributes
    ----------
    file : str
        The file (or ``"<bytes>"`` for in-memory data).
    member : str
        The part of the file: a tar member such as ``"0.data"``, or a section.
    offset : int
        The byte offset within the member where the problem was found.

    Example
    -------
    >>> import cubescale
    >>> try:
    ...     cubescale.systree.SystemTree.from_bytes(b"garbage", source="x.bin")
    ... except cubescale.FormatError as e:
    ...     print(e.file, e.member, e.offset)
    x.bin sequence tree 0
    """

    def __init__(self, message: str, file: str = "", member: str = "", offset: int = 0):
        self.message = message
        self.file = file
        self.member = member
        self.offset = offset
        where = file or "<bytes>"
        if member:
            where += f": member {member}"
        super().__init__(f"{where}: offset {offset}: {message}")

    def __reduce__(self):  # picklable, e.g. across mpi4py
        return (type(self), (self.message, self.file, self.member, self.offset))


def error_text(error: BaseException) -> str:
    """What an error says, without Python's quoting: ``file: reason`` for a failed system call
    (as ``cubescale`` prints it in one line), a KeyError's message without quotes, else
    ``str(error)``; the same on one rank and when another rank reports it under mpirun.

    Example
    -------
    >>> error_text(FileNotFoundError(2, "No such file or directory", "x.cubex"))
    'x.cubex: No such file or directory'
    >>> error_text(KeyError("no metric 'tme'"))
    "no metric 'tme'"
    """
    if isinstance(error, KeyError) and error.args:
        return str(error.args[0])
    if isinstance(error, OSError) and error.filename is not None and error.strerror:
        return f"{error.filename}: {error.strerror}"
    return str(error)
