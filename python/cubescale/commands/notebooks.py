"""``cubescale notebooks DIR``: copy the Jupyter notebooks that ship with cubescale into DIR.

The notebooks open the report that ships with cubescale (:mod:`cubescale.examples`) unless
``CUBESCALE_REPORT`` names another one. They use pandas and matplotlib; Jupyter itself is the
``notebook`` extra (``pip install 'cubescale[notebook]'`` brings all three).

Example
-------
>>> import os, tempfile
>>> from cubescale.cli import main
>>> out = os.path.join(tempfile.mkdtemp(), "nb")
>>> main(["notebooks", out])  # doctest: +ELLIPSIS
copied 4 notebooks to .../nb: explore_demo.ipynb, report.ipynb, systree.ipynb, threads.ipynb
...
0
>>> main(["notebooks", out])  # a second time: refused with one line on stderr, nothing written
2
>>> main(["notebooks", out, "--force"])  # doctest: +ELLIPSIS
copied 4 notebooks to ...
...
0
"""

from __future__ import annotations

import argparse
import errno
import importlib.util
import os

from .. import files

NOTEBOOK_EXTRA = "pip install 'cubescale[notebook]'"
"""How to install what the notebooks need beyond numpy: Jupyter, pandas and matplotlib."""


def add_parser(subparsers) -> None:
    """Register the ``notebooks`` subcommand."""
    p = subparsers.add_parser(
        "notebooks", help="copy the Jupyter notebooks that ship with cubescale into a folder",
        description="Copies the notebooks that ship with cubescale (explore_demo, report, systree, threads) into "
                    "DIR (created if needed) and says how to open them. They explore the report that ships with "
                    "cubescale, or the one CUBESCALE_REPORT names. Existing files are left alone unless --force.",
        epilog="examples:\n  cubescale notebooks notebooks\n"
               "  CUBESCALE_REPORT=$PWD/demo.cubex jupyter notebook notebooks/explore_demo.ipynb",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("directory", metavar="DIR", help="folder to copy the notebooks into")
    p.add_argument("--force", action="store_true", help="overwrite notebooks of the same names in DIR")
    p.set_defaults(run=run_notebooks)


def shipped_notebooks() -> list[str]:
    """The paths of the notebooks in the installed package, by name.

    Example
    -------
    >>> [os.path.basename(p) for p in shipped_notebooks()]
    ['explore_demo.ipynb', 'report.ipynb', 'systree.ipynb', 'threads.ipynb']
    """
    here = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "notebooks")
    return [os.path.join(here, name) for name in sorted(os.listdir(here)) if name.endswith(".ipynb")]


def copy_notebooks(directory: str | os.PathLike, force: bool = False) -> list[str]:
    """Copy the shipped notebooks into ``directory`` (created if needed) and return the new
    paths. Without ``force``, raises ``FileExistsError`` before copying anything if one of
    them is there already; each file appears complete (written beside, then renamed).

    Example
    -------
    >>> import tempfile
    >>> out = tempfile.mkdtemp()
    >>> len(copy_notebooks(out)), len(copy_notebooks(out, force=True))
    (4, 4)
    """
    directory = os.fspath(directory)
    sources = shipped_notebooks()
    targets = [os.path.join(directory, os.path.basename(s)) for s in sources]
    existing = [t for t in targets if os.path.lexists(t)]
    if existing and not force:
        raise FileExistsError(errno.EEXIST, f"{len(existing)} of the notebooks exist: give --force to overwrite them",
                              existing[0])
    os.makedirs(directory, exist_ok=True)
    for source, target in zip(sources, targets):
        with open(source, "rb") as src:
            files.write_bytes(target, src.read())  # complete or not at all (cubescale.files)
    return targets


def missing_for_notebooks() -> list[str]:
    """What the notebooks need that is not importable here, of Jupyter (the ``notebook``
    package), pandas and matplotlib.

    Example
    -------
    >>> set(missing_for_notebooks()) <= {"Jupyter", "pandas", "matplotlib"}
    True
    """
    needed = {"Jupyter": "notebook", "pandas": "pandas", "matplotlib": "matplotlib"}
    return [name for name, module in needed.items() if importlib.util.find_spec(module) is None]


def how_to_open(notebook: str, report: str | None = None) -> list[str]:
    """The command that opens ``notebook`` in Jupyter (on ``report`` if given) and, when
    something it needs is missing here, what to install first.

    Example
    -------
    >>> how_to_open("nb/explore_demo.ipynb", "/data/demo.cubex")[0]
    'CUBESCALE_REPORT=/data/demo.cubex jupyter notebook nb/explore_demo.ipynb'
    """
    lines = [f"{'CUBESCALE_REPORT=' + report + ' ' if report else ''}jupyter notebook {notebook}"]
    missing = missing_for_notebooks()
    if missing:
        lines.append(f"(first {NOTEBOOK_EXTRA}: {', '.join(missing)} {'is' if len(missing) == 1 else 'are'} "
                     "not installed here)")
    return lines


def run_notebooks(args) -> int:
    copied = copy_notebooks(args.directory, force=args.force)
    names = ", ".join(os.path.basename(p) for p in copied)
    print(f"copied {len(copied)} notebooks to {args.directory}: {names}")
    print("open them with: " + "\n  ".join(how_to_open(os.path.join(args.directory, "explore_demo.ipynb"))))
    return 0
