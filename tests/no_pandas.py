"""The command line in a process that cannot import pandas, as after ``pip install cubescale``
without extras (run as ``python -c NO_PANDAS ARGS``): a meta-path finder refuses pandas before
the installed one is found. Shared by the tests with and without mpirun."""

NO_PANDAS = """
import sys
class NoPandas:
    def find_spec(self, name, path=None, target=None):
        if name == "pandas" or name.startswith("pandas."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
sys.meta_path.insert(0, NoPandas())
from cubescale.cli import main
sys.exit(main(sys.argv[1:]))
"""
