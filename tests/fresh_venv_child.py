"""Run inside a fresh virtual environment by test_wheel_fresh_venv.py (not a test module).

    python fresh_venv_child.py doctests            # every module's docstring examples
    python fresh_venv_child.py readme README.md    # the README's ```python blocks

Prints one JSON object: per module (or README block) the examples attempted, the real
failures, and the examples that could not run because an optional dependency (an extra) is
not installed, by extra. An example that fails after an earlier example of its docstring
missed an extra counts as missing that extra too: it lacks what that example would have made.
"""

from __future__ import annotations

import ast
import contextlib
import doctest
import importlib
import io
import json
import pkgutil
import sys
import traceback

# Importable name -> the extra of pyproject.toml that installs it.
EXTRAS = {"pandas": "pandas", "matplotlib": "plot", "mpi4py": "mpi", "notebook": "notebook", "hatchet": "hatchet",
          "thicket": "hatchet"}
NOT_MODULES = ("cubescale.__main__", "cubescale._core")  # runs the CLI / the extension


def named_extra(text: str) -> str | None:
    """The extra a message of cubescale's asks to install (``pip install 'cubescale[pandas]'``)."""
    if "pip install 'cubescale[" not in text:
        return None
    return text.split("pip install 'cubescale[", 1)[1].split("]", 1)[0]


def missing_extra(exc: BaseException) -> str | None:
    """The extra whose absence raised ``exc``, if that is what happened ("shared data" for
    examples that still open the shared test data, which no pip user has)."""
    if isinstance(exc, ModuleNotFoundError) and exc.name:
        return EXTRAS.get(exc.name.split(".")[0])
    if named_extra(str(exc)):  # cubescale's own message, whatever the exception's class
        return named_extra(str(exc))
    if isinstance(exc, FileNotFoundError) and "shared test data" in str(exc):
        return "shared data"
    return None


class Runner(doctest.DocTestRunner):
    """Tells failures caused by a missing extra apart from real ones."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.failures_seen: list[str] = []
        self.needs: dict[str, int] = {}
        self._missing: str | None = None

    def run(self, test, *args, **kwargs):  # one docstring
        self._missing = None
        self._stderr = io.StringIO()
        with contextlib.redirect_stderr(self._stderr):  # the CLI names a missing extra there
            return super().run(test, *args, **kwargs)

    def report_start(self, out, test, example):
        self._stderr.seek(0)
        self._stderr.truncate()

    def report_failure(self, out, test, example, got):
        # A command that lacks an extra says so in one line on stderr and returns 2.
        self._missing = named_extra(self._stderr.getvalue()) or self._missing
        if self._missing:
            self.needs[self._missing] = self.needs.get(self._missing, 0) + 1
        else:
            self.failures_seen.append(f"{test.name}: {example.source.strip()!r} printed {got!r}")

    def report_unexpected_exception(self, out, test, example, exc_info):
        extra = missing_extra(exc_info[1])
        if extra or self._missing:
            self._missing = extra or self._missing
            self.needs[self._missing] = self.needs.get(self._missing, 0) + 1
        else:
            self.failures_seen.append(f"{test.name}: {example.source.strip()!r} raised {exc_info[1]!r}")


def doctests() -> dict:
    import cubescale

    names = ["cubescale"] + sorted(m.name for m in pkgutil.walk_packages(cubescale.__path__, "cubescale.")
                                   if not m.name.startswith(NOT_MODULES))
    out = {}
    for name in names:
        try:
            module = importlib.import_module(name)
        except Exception as e:  # a module that needs an extra to import at all
            extra = missing_extra(e)
            out[name] = {"attempted": 0, "failed": [] if extra else [repr(e)], "needs": {extra: "import"} if extra else {}}
            continue
        runner = Runner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, verbose=False)
        try:
            tests = doctest.DocTestFinder().find(module, name)
        except Exception as e:  # e.g. a module attribute whose hasattr() raises: doctest cannot look
            out[name] = {"attempted": 0, "failed": [f"finding the examples raised {e!r}"], "needs": {}}
            continue
        for test in tests:
            runner.run(test, out=lambda text: None)
        out[name] = {"attempted": runner.tries, "failed": runner.failures_seen,
                     "needs": runner.needs}
    return out


def readme(path: str) -> dict:
    text = open(path, encoding="utf-8").read()
    blocks = [b.split("```", 1)[0] for b in text.split("```python\n")[1:]]
    out = {}
    namespace: dict = {"__name__": "__main__"}  # one session: a block uses what earlier ones imported
    for i, block in enumerate(blocks):
        name = f"README python block {i + 1}"
        if "mpi4py" in block:  # runs under mpirun: tests/mpi has those
            out[name] = {"attempted": 0, "failed": [], "needs": {"mpi": "mpirun"}}
            continue
        failed, needs, missing = [], {}, None
        statements = ast.parse(block).body
        for stmt in statements:
            try:
                with contextlib.redirect_stdout(io.StringIO()):  # stdout carries the JSON result
                    exec(compile(ast.Module([stmt], []), name, "exec"), namespace)
            except Exception as e:
                extra = missing_extra(e)
                if extra or missing:
                    missing = extra or missing
                    needs[missing] = needs.get(missing, 0) + 1
                else:
                    failed.append(f"{ast.unparse(stmt)!r} raised {''.join(traceback.format_exception_only(e)).strip()}")
        out[name] = {"attempted": len(statements), "failed": failed, "needs": needs}
    return out


if __name__ == "__main__":
    result = doctests() if sys.argv[1] == "doctests" else readme(sys.argv[2])
    print(json.dumps(result))
