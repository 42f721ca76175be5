"""Builds the API reference (HTML) from the docstrings of every public module of the
installed cubescale with pdoc, into build/api/ unless a folder is given. scripts/test.sh runs
it, so a docstring that breaks the generator breaks the test command.

    python3 scripts/api_docs.py [OUTPUT_DIR]
"""

from __future__ import annotations

import pkgutil
import sys
import warnings
from pathlib import Path

import pdoc
import pdoc.render

import cubescale


def public_modules() -> list[str]:
    """cubescale and its submodules, without private ones (``_core``, ``_mpi`` …) and
    ``__main__``."""
    names = [m.name for m in pkgutil.walk_packages(cubescale.__path__, "cubescale.")]
    return ["cubescale"] + sorted(n for n in names if not any(part.startswith("_") for part in n.split(".")))


def main(argv: list[str]) -> int:
    out = Path(argv[1] if len(argv) > 1 else "build/api")
    pdoc.render.configure(docformat="numpy", show_source=False)
    modules = public_modules()
    # pdoc adds the submodules a package's __all__ names by itself and warns when they are
    # named again; the others must be named, so every one is.
    warnings.filterwarnings("ignore", message="The module specification", category=UserWarning)
    pdoc.pdoc(*modules, output_directory=out)
    missing = [m for m in modules if not (out / (m.replace(".", "/") + ".html")).exists()]
    if missing:
        print(f"api_docs: no page for {', '.join(missing)}", file=sys.stderr)
        return 1
    print(f"api_docs: {len(modules)} modules -> {out / 'index.html'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
