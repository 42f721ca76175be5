"""``cubescale clean DIR``: remove the temporaries of writers that died (SIGKILL, power loss).

Only files of cubescale's temporary naming whose writer is gone are touched
(:func:`cubescale.files.stale_temporaries`), and the unfinished trace folders
(``<trace>.partial``) of traced runs whose every rank is gone, such as a rank killed or
``MPI.Abort``-ed (:func:`cubescale.files.stale_partial_traces`); ``--dry-run`` only lists them.

Example
-------
>>> import os, subprocess, sys, tempfile
>>> from cubescale.cli import main
>>> from cubescale.files import temporary_name
>>> d = tempfile.mkdtemp()
>>> gone = int(subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
...                           capture_output=True, text=True).stdout)
>>> with open(os.path.join(d, temporary_name("run.cubex", pid=gone)), "wb") as f:
...     _ = f.write(bytes(2048))
>>> main(["clean", d])  # doctest: +ELLIPSIS
removed .../.run.cubex.cubescale-tmp...: 2048 bytes (temporary of run.cubex, writer pid ... gone)
removed 1 stale temporary, 2048 bytes
0
>>> os.listdir(d)
[]
"""

from __future__ import annotations

import os
import shutil

from ..files import PartialTrace, Temporary, partial_traces, stale_partial_traces, stale_temporaries, temporaries


def add_parser(subparsers) -> None:
    """Register the ``clean`` subcommand."""
    p = subparsers.add_parser(
        "clean", help="remove temporaries left by killed cubescale writers",
        description="List the temporary files that cubescale writers killed mid-write left in DIR "
                    "(.<name>.cubescale-tmp.<host>.<pid>.<hex>, written on this host by a process that is gone) "
                    "with their sizes, and remove them, and the unfinished trace folders (<trace>.partial) of "
                    "traced runs whose ranks all died. Nothing else is ever removed; temporaries of running "
                    "writers and of other hosts are left alone.",
        epilog="examples:\n  cubescale clean results/\n  cubescale clean --dry-run results/")
    p.add_argument("directory", help="directory to clean (not recursive)")
    p.add_argument("--dry-run", action="store_true", help="only list what would be removed")
    p.set_defaults(run=run_clean)


def run_clean(args) -> int:
    stale = stale_temporaries(args.directory)
    kept = len(temporaries(args.directory)) - len(stale)
    removed = []
    for t in stale:
        if not args.dry_run and not _removed(t):
            continue
        removed.append(t)
        print(f"{'would remove' if args.dry_run else 'removed'} {_shown(t.path)}: {t.size} bytes "
              f"(temporary of {_shown(t.target)}, writer pid {t.pid} gone)")
    traces, live = _clean_partial_traces(args.directory, args.dry_run)
    total = sum(t.size for t in removed) + sum(t.size for t in traces)
    plural = "y" if len(removed) == 1 else "ies"
    unfinished = f" and {len(traces)} unfinished trace{'s' if len(traces) != 1 else ''}" if traces else ""
    print(f"{'would remove' if args.dry_run else 'removed'} {len(removed)} stale temporar{plural}{unfinished}, "
          f"{total} bytes" + (f"; {kept + live} of running writers or other hosts left alone" if kept + live else ""))
    return 0


def _clean_partial_traces(directory: str, dry_run: bool) -> tuple[list[PartialTrace], int]:
    """The stale unfinished traces removed (or listed), and how many others were left alone."""
    stale = stale_partial_traces(directory)
    live = len(partial_traces(directory)) - len(stale)
    done = []
    for t in stale:
        if not dry_run:
            shutil.rmtree(t.path, ignore_errors=True)
            if os.path.lexists(t.path):
                continue
        done.append(t)
        pids = ", ".join(str(pid) for _, pid in t.writers)
        print(f"{'would remove' if dry_run else 'removed'} {_shown(t.path)}/: {t.size} bytes (unfinished trace "
              f"{_shown(t.target)}, writer pid{'s' if len(t.writers) > 1 else ''} {pids} gone)")
    return done, live


def _shown(name: str) -> str:
    """A file name printable on any terminal (names need not be UTF-8)."""
    return os.fsencode(name).decode("utf-8", "backslashreplace")


def _removed(temporary: Temporary) -> bool:
    """Unlinks the name (never a link's target); False if someone else removed it first."""
    try:
        os.unlink(temporary.path)
    except FileNotFoundError:
        return False
    return True
