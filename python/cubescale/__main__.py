"""``python -m cubescale``: the command line (as the ``cubescale`` script), e.g. under
``mpirun -n 4 python -m cubescale ...`` where an entry-point script is not on every node's PATH."""

import sys

from .cli import main

sys.exit(main())
