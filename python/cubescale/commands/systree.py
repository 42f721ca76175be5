"""``cubescale systree``: describe a machine in sequence form, with its size in both forms.

Example
-------
>>> from cubescale.cli import main
>>> main(["systree", "--shape", "node:2 process:4", "--quiet"])
machine ×1 > node ×2 > process ×4
0
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .. import files
from ..systree import SystemTree
from ._inputs import check_output

HELP = "print a machine description (sequence form) and its size in both forms"


def add_parser(subparsers) -> None:
    """Register the ``systree`` subcommand."""
    p = subparsers.add_parser(
        "systree",
        help=HELP,
        description=(
            "Print a machine description in sequence form — from a shape spec, a JSON or binary "
            "file, or this machine via hwloc — with its size as sequence records and as "
            "single-node definitions."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=(
            "examples:\n"
            "  cubescale systree --shape juqueen\n"
            "  cubescale systree --shape 'rack:2 node:32 process:64 thread:4'\n"
            "  cubescale systree --shape figure4 --json-out fig4.json\n"
            "  cubescale systree --local --threads 4\n"
            "  cubescale systree --local --synthetic 'pack:2 l3:1 core:4 pu:2' --cpus 0-1\n"
            "shape presets: juqueen, juqueen-threads, juqueen-rack, figure4"
        ),
    )
    src = p.add_mutually_exclusive_group()
    src.add_argument("--shape", metavar="SPEC", help="levels 'class:count ...' or a preset (default: juqueen)")
    src.add_argument("--json", metavar="FILE", type=Path, help="a JSON description (cubescale-systree)")
    src.add_argument("--input", metavar="FILE", type=Path, help="a binary sequence tree (from --bytes-out)")
    src.add_argument("--local", action="store_true", help="this machine (or a synthetic one) via hwloc")
    p.add_argument("--synthetic", metavar="DESC", help="with --local: hwloc synthetic topology")
    p.add_argument(
        "--cpus", metavar="LIST", help="with --local: the process binding (hwloc list, e.g. 0-3, or bitmask 0xf)"
    )
    p.add_argument("--threads", type=int, help="with --local: threads of the process (default 1)")
    p.add_argument("--json-out", metavar="FILE", type=Path, help="also write the JSON form")
    p.add_argument("--bytes-out", metavar="FILE", type=Path, help="also write the binary form")
    p.add_argument("--quiet", action="store_true", help="print only the tree")
    p.set_defaults(run=run, prepare=prepare)


def prepare(args) -> None:
    """Neither output is the file the tree is read from."""
    given = [str(f) for f in (args.json, args.input) if f is not None]
    for out in (args.json_out, args.bytes_out):
        if out is not None:
            check_output(str(out), given)


def _load(args) -> SystemTree:
    if args.json:
        return SystemTree.from_json(args.json.read_text(), source=str(args.json))
    if args.input:
        return SystemTree.from_bytes(args.input.read_bytes(), source=str(args.input))
    if args.local:
        threads = args.threads if args.threads is not None else 1
        return SystemTree.local(threads=threads, synthetic=args.synthetic, cpus=args.cpus)
    return SystemTree.from_shape(args.shape or "juqueen")


# Far above any machine's threads per process, and the C++ side's uint32 holds it.
MAX_THREADS = 1 << 20


def _usage_error(args) -> str | None:
    """What is wrong with the options together, or None."""
    if not args.local:
        given = [name for name, value in (("--synthetic", args.synthetic), ("--cpus", args.cpus),
                                          ("--threads", args.threads)) if value is not None]
        if given:
            return f"{', '.join(given)} go{'es' if len(given) == 1 else ''} with --local"
    if args.threads is not None and not 1 <= args.threads <= MAX_THREADS:
        # CUBE and OTF2 allow no process without a location
        return f"--threads {args.threads}: a process has 1 to {MAX_THREADS} threads"
    if args.cpus is not None and not args.cpus.strip():
        return "--cpus needs a list of PUs (e.g. 0-3, or a bitmask 0xf)"
    return None


def run(args) -> int:
    """Execute ``cubescale systree``."""
    error = _usage_error(args)
    if error:
        print(f"cubescale: error: {error}", file=sys.stderr)
        return 2
    tree = _load(args)
    print(tree.render() if args.quiet else tree.summary())
    if args.json_out:
        files.write_bytes(args.json_out, tree.to_json().encode())
    if args.bytes_out:
        files.write_bytes(args.bytes_out, tree.to_bytes())
    return 0
