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
