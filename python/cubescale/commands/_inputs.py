"""What the user gave on the command line, checked before a command reads or writes anything:
a report where a report is expected, a trace where a trace is expected, an experiment
directory resolved to the file inside it, and no output that is one of the inputs.

Each check raises an error whose one line says what was given and what was expected
(:class:`cubescale.FormatError` for the wrong kind of file, ``OSError`` with errno for a
directory without the file or a missing event folder, :class:`UsageError` for outputs).

Example
-------
>>> from cubescale import examples
>>> report_path(examples.report_path()).endswith("demo.cubex")
True
>>> try:
...     check_output(examples.report_path(), [examples.report_path()])
... except UsageError as e:
...     print(str(e).split(":")[-1].strip())
write to another file (nothing was written)
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterable

from ..errors import FormatError

__all__ = ["UsageError", "check_output", "check_trace_output", "checked_trace", "file_kind", "input_of_info",
           "report_path", "trace_inputs", "trace_path"]

# Scalasca writes summary.cubex / trace.cubex into its experiment directories, Score-P profile.cubex.
REPORT_NAMES = ("profile.cubex", "summary.cubex", "trace.cubex")
TRACE_NAMES = ("traces.otf2",)


class UsageError(ValueError):
    """The arguments contradict each other (an output that is also an input).

    Example
    -------
    >>> isinstance(UsageError("the output a.cubex is the input a.cubex"), ValueError)
    True
    """


def file_kind(path: str) -> str:
    """``"cubex"`` (a tar archive, as every CUBE4 writer makes), ``"otf2"`` (an OTF2 anchor),
    ``"empty"``, ``"text"`` or ``"other"``, from the first 512 bytes.

    Example
    -------
    >>> from cubescale import examples
    >>> file_kind(examples.report_path()), file_kind(examples.trace_path())
    ('cubex', 'otf2')
    """
    with open(path, "rb") as f:
        head = f.read(512)
    if not head:
        return "empty"
    if head[257:262] == b"ustar":
        return "cubex"
    if b"OTF2" in head[:8]:  # the anchor's first bytes: a record type and length, then the magic
        return "otf2"
    if b"\0" not in head:
        try:
            head.decode("utf-8")
            return "text"
        except UnicodeDecodeError as e:
            if e.start < len(head) - 4:  # a character cut at the 512th byte is still text
                return "other"
            return "text"
    return "other"


def _inside(directory: str, names: Iterable[str]) -> str | None:
    for name in names:
        candidate = os.path.join(directory, name)
        if os.path.isfile(candidate):
            return candidate
    return None


def _not_found(path: str) -> OSError:
    return FileNotFoundError(errno.ENOENT, "no such file or directory", path)


def report_path(path: str) -> str:
    """The ``.cubex`` report that ``path`` names: the file itself, or the report inside an
    experiment directory (``profile.cubex``, ``summary.cubex``, ``trace.cubex``).

    Example
    -------
    >>> import os
    >>> from cubescale import examples
    >>> report_path(examples.report_path()) == examples.report_path()
    True
    >>> try:  # the shipped trace's folder: an experiment directory without a report
    ...     report_path(os.path.dirname(examples.trace_path()))
    ... except IsADirectoryError as e:
    ...     print(e.strerror.split(";")[0])
    an experiment directory with a trace (traces.otf2) but no report
    """
    if os.path.isdir(path):
        found = _inside(path, REPORT_NAMES)
        if found:
            return found
        if _inside(path, TRACE_NAMES):
            raise IsADirectoryError(errno.EISDIR, "an experiment directory with a trace (traces.otf2) but no "
                                    "report; `cubescale trace-profile` makes one of the trace", path)
        raise IsADirectoryError(errno.EISDIR, f"a directory without a report; expected a .cubex report or an "
                                              f"experiment directory holding {' or '.join(REPORT_NAMES)}", path)
    if not os.path.exists(path):
        raise _not_found(path)
    if not os.path.isfile(path):  # reading its first bytes would wait on a FIFO
        raise FormatError("not a regular file (a device, FIFO or socket), not a .cubex report", file=path)
    kind = file_kind(path)
    if kind == "otf2":
        raise FormatError("an OTF2 trace's anchor, not a .cubex report; `cubescale trace-profile` "
                          "makes a report of it", file=path)
    if kind in ("text", "empty"):
        raise FormatError(f"{'an empty file' if kind == 'empty' else 'a text file'}, not a .cubex report "
                          "(a tar archive as Score-P, Scalasca and CubeLib write)", file=path)
    if kind != "cubex" and path.endswith((".def", ".evt")):
        raise FormatError(f"{_trace_member(path)}, not a .cubex report; `cubescale trace-profile` makes a "
                          "report of the trace", file=path)
    return path


def trace_path(path: str, need_events: bool = True) -> str:
    """The OTF2 anchor that ``path`` names: the file itself, or ``traces.otf2`` inside an
    experiment directory (or its one ``.otf2``); its event folder (``traces/`` beside
    ``traces.otf2``) must exist unless ``need_events`` is False.

    Example
    -------
    >>> import os
    >>> from cubescale import examples
    >>> trace_path(os.path.dirname(examples.trace_path())) == examples.trace_path()
    True
    """
    _unfinished_trace(path)  # a traced run's DIR.partial is named as such, not as "no trace"
    if os.path.isdir(path):
        found = _inside(path, TRACE_NAMES)
        if found is None:
            anchors = sorted(f for f in os.listdir(path) if f.endswith(".otf2"))
            found = os.path.join(path, anchors[0]) if len(anchors) == 1 else None
        if found is None:
            holds = " (it holds a report: give that to info, dump or top)" if _inside(path, REPORT_NAMES) else ""
            raise IsADirectoryError(errno.EISDIR, f"a directory without an OTF2 trace; expected the anchor "
                                                  f"traces.otf2 or an experiment directory holding it{holds}", path)
        path = found
    if not os.path.exists(path):
        raise _not_found(path)
    if not os.path.isfile(path):  # reading its first bytes would wait on a FIFO
        raise FormatError("not a regular file (a device, FIFO or socket), not an OTF2 trace's anchor", file=path)
    kind = file_kind(path)
    if kind == "cubex":
        raise FormatError("a CUBE4 report (.cubex), not an OTF2 trace; expected a trace's anchor file "
                          "(traces.otf2 of a Score-P experiment)", file=path)
    if kind in ("text", "empty"):
        raise FormatError(f"{'an empty file' if kind == 'empty' else 'a text file'}, not an OTF2 trace's "
                          "anchor (traces.otf2)", file=path)
    if kind != "otf2" and path.endswith((".def", ".evt")):
        raise FormatError(f"{_trace_member(path)}, not the trace's anchor (traces.otf2)", file=path)
    events = os.path.splitext(path)[0]  # OTF2 keeps the events in a folder named like the anchor
    if need_events and not os.path.isdir(events):
        raise FileNotFoundError(errno.ENOENT, f"the trace's event folder {os.path.basename(events)}/ "
                                              f"is missing beside {os.path.basename(path)}", events)
    return path


def _trace_member(path: str) -> str:
    """What a trace's ``.def`` or ``.evt`` file is, naming its anchor where that exists."""
    beside = os.path.splitext(os.path.abspath(path))[0] + ".otf2"  # a global .def's anchor
    anchor = beside if os.path.isfile(beside) else os.path.dirname(os.path.abspath(path)) + ".otf2"
    hint = f" (give its anchor {anchor})" if os.path.isfile(anchor) else ""
    return f"an OTF2 {'event' if path.endswith('.evt') else 'definition'} file{hint}"


def input_of_info(path: str) -> tuple[str, str]:
    """``("cubex", report)`` or ``("otf2", anchor)``: what ``info`` summarizes of ``path``; an
    experiment directory gives its report if it has one, else its trace.

    Example
    -------
    >>> import os
    >>> from cubescale import examples
    >>> kind, path = input_of_info(os.path.dirname(examples.trace_path()))
    >>> kind, os.path.basename(path)
    ('otf2', 'traces.otf2')
    """
    _unfinished_trace(path)
    if os.path.isdir(path):
        if _inside(path, REPORT_NAMES) is None:
            try:  # traces.otf2, or the directory's one anchor (OTF2's integrity trace: TestTrace.otf2)
                return "otf2", trace_path(path)
            except IsADirectoryError:
                raise IsADirectoryError(errno.EISDIR, "a directory without a report or a trace; expected a .cubex "
                                                      "report, an OTF2 anchor (traces.otf2) or an experiment "
                                                      "directory holding one", path) from None
        return "cubex", report_path(path)
    kind = file_kind(path) if os.path.isfile(path) else None
    if path.endswith(".otf2") or kind == "otf2" or (kind != "cubex" and path.endswith((".def", ".evt"))):
        return "otf2", trace_path(path)  # (a trace's .def or .evt: named with its anchor)
    return "cubex", report_path(path)


def _unfinished_trace(path: str) -> None:
    """Raises when ``path`` is (or, missing, has beside it) the unfinished folder of a traced run
    (``<trace>.partial``, see :func:`cubescale.files.stale_partial_traces`): what it is, and
    whether ``cubescale clean`` can remove it."""
    from ..files import PARTIAL_SUFFIX, partial_traces, stale_partial_traces

    stripped = path.rstrip(os.sep)
    partial = stripped if stripped.endswith(PARTIAL_SUFFIX) else stripped + PARTIAL_SUFFIX
    if partial != stripped and os.path.exists(stripped):
        return
    parent = os.path.dirname(partial) or "."
    if not os.path.isdir(partial) or not any(t.path == os.path.join(parent, os.path.basename(partial))
                                             for t in partial_traces(parent)):
        return
    gone = any(os.path.basename(t.path) == os.path.basename(partial) for t in stale_partial_traces(parent))
    state = (f"its run died before writing it; `cubescale clean {parent}` removes it" if gone
             else "its run is still writing it (or ran on another host)")
    what = f"the unfinished trace of a traced run ({os.path.basename(partial)}): {state}"
    if partial != stripped:  # the trace itself was never written
        raise FileNotFoundError(errno.ENOENT, f"no such trace; beside it is {what}", path)
    raise IsADirectoryError(errno.EISDIR, what, partial)


def check_output(output: str, inputs: Iterable[str], directory_made_later: bool = False) -> None:
    """Refuses, before any reading, an output that is one of the inputs (the same file under any
    name) or an existing file inside an input directory (a trace's event folder): a command never
    writes over what it reads; and an output the writing would fail on or destroy: in a
    directory that does not exist, a directory itself, or a device, FIFO or socket (whole files
    are renamed into place: as root that replaces ``/dev/null``). ``directory_made_later``: the
    command runs code that may make the output's directory first (``cubescale run``).

    Example
    -------
    >>> check_output("/nonexistent/old.cubex", ["/nonexistent/old.cubex"])
    Traceback (most recent call last):
    FileNotFoundError: [Errno 2] no such directory for the output: '/nonexistent'
    >>> try:
    ...     check_output("/dev/null", [])
    ... except FileExistsError as e:
    ...     print(e.strerror)
    not a regular file (a device, FIFO or socket), which writing would replace
    """
    from ..files import check_target

    if directory_made_later and not os.path.isdir(os.path.dirname(output) or "."):
        return
    check_target(output)  # its directory; not a directory, device, FIFO or socket
    if not os.path.exists(output):
        return  # none yet, or a dangling symlink (replaced, as mv does)
    real = os.path.realpath(output)
    for given in inputs:
        if not os.path.exists(given):
            continue
        if os.path.isdir(given):
            if real.startswith(os.path.realpath(given) + os.sep):
                raise UsageError(f"the output {output} is inside the input {given}: write to another file "
                                 "(nothing was written)")
        elif os.path.samefile(output, given):
            raise UsageError(f"the output {output} is the input {given}: write to another file "
                             "(nothing was written)")


def trace_inputs(anchor: str) -> list[str]:
    """What a trace command reads of the trace at ``anchor`` (for :func:`check_output`): the
    anchor, the global definitions and the event folder.

    Example
    -------
    >>> [os.path.basename(p) for p in trace_inputs("/run/traces.otf2")]
    ['traces.otf2', 'traces.def', 'traces']
    """
    stem = os.path.splitext(anchor)[0]
    return [anchor, stem + ".def", stem]


def check_trace_output(output: str | os.PathLike[str], anchor: str) -> None:
    """:func:`check_output` for what reads the trace at ``anchor``: ``output`` is writable and
    none of the trace's files (:func:`trace_inputs`).

    Example
    -------
    >>> from cubescale import examples
    >>> try:
    ...     check_trace_output(examples.trace_path(), examples.trace_path())
    ... except UsageError as e:
    ...     print(str(e).split(":")[-1].strip())
    write to another file (nothing was written)
    """
    check_output(os.fspath(output), trace_inputs(anchor))


def checked_trace(trace: str | os.PathLike[str], output: str | os.PathLike[str] | None) -> str:
    """The anchor of the trace ``trace`` names (:func:`trace_path`), once ``output`` (None: no
    output) is known to be writable and none of the trace's files (:func:`check_output`): what
    a function that reads a trace for long and then writes a report checks first.

    Example
    -------
    >>> from cubescale import examples
    >>> try:
    ...     checked_trace(examples.trace_path(), examples.trace_path())
    ... except UsageError as e:
    ...     print(str(e).split(":")[-1].strip())
    write to another file (nothing was written)
    """
    anchor = trace_path(os.fspath(trace))
    if output is not None:
        check_trace_output(output, anchor)
    return anchor
