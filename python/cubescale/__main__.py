"""``python -m cubescale``: the command line (as under ``mpirun -n 8 python -m cubescale ...``)."""

import sys

from .cli import main

sys.exit(main())
