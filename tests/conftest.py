import os
from pathlib import Path

import pytest

# ../shared/data beside the checkout, unless CUBESCALE_SHARED_DATA says otherwise (as scripts/test.sh
# exports it and the other tests read it): a worktree elsewhere finds the data too.
SHARED_DATA = Path(os.environ.get("CUBESCALE_SHARED_DATA", Path(__file__).resolve().parents[1].parent / "shared" / "data"))


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The real measurement data in ../shared/data (see its README)."""
    if not SHARED_DATA.is_dir():
        pytest.fail(f"shared data not found at {SHARED_DATA}")
    return SHARED_DATA


def pytest_report_header(config):
    import cubescale

    dev = os.environ.get("CUBESCALE_DEV_BUILD")
    return f"cubescale {cubescale.__version__} from {Path(cubescale.__file__).parent}" + (
        f" (core from {dev})" if dev else ""
    )


@pytest.fixture(scope="session", autouse=True)
def _temporary_files_below_pytests_own(tmp_path_factory):
    """The examples in docstrings make folders with ``tempfile.mkdtemp()`` and leave them, as a
    user's session would; under the tests those folders (and every subprocess's, through
    TMPDIR) go below pytest's own temporary directory, which pytest prunes, instead of piling
    up in /tmp (about 200 per full run)."""
    import tempfile

    folder = str(tmp_path_factory.mktemp("tmp"))
    saved_environment, saved_default = os.environ.get("TMPDIR"), tempfile.tempdir
    os.environ["TMPDIR"], tempfile.tempdir = folder, folder
    yield
    tempfile.tempdir = saved_default
    if saved_environment is None:
        os.environ.pop("TMPDIR", None)
    else:
        os.environ["TMPDIR"] = saved_environment


# A test that starts MPI in the test process (mpi4py's singleton, as the parallel docstrings do)
# leaves Open MPI's variables in the process's C environment, which os.environ does not show
# but every later subprocess inherits: a `cubescale` command started by a later test then
# believes mpirun launched it. Removed after each test; those present at the start are kept.
_LAUNCHER_PREFIXES = ("OMPI_", "PMIX_", "PMI_", "OPAL_", "ORTE_")
_LAUNCHER_AT_START = {k for k in os.environ if k.startswith(_LAUNCHER_PREFIXES)}


def _c_environment_names() -> list[str]:
    """The names in this process's C environment (``environ``), setenv'd ones included."""
    import ctypes

    entries = ctypes.POINTER(ctypes.c_char_p).in_dll(ctypes.CDLL(None), "environ")
    names, i = [], 0
    while entries[i] is not None:
        names.append(entries[i].split(b"=", 1)[0].decode(errors="replace"))
        i += 1
    return names


@pytest.fixture(autouse=True)
def _no_mpi_launcher_variables_after_a_test():
    yield
    for name in _c_environment_names():
        if name.startswith(_LAUNCHER_PREFIXES) and name not in _LAUNCHER_AT_START:
            os.unsetenv(name)
            os.environ.pop(name, None)
