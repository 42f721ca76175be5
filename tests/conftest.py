import os
from pathlib import Path

import pytest

# ../shared/data beside the checkout, unless CUBESCALE_SHARED_DATA says otherwise (a worktree
# elsewhere, as test_cube_csv.py allows already).
SHARED_DATA = Path(os.environ.get("CUBESCALE_SHARED_DATA") or Path(__file__).resolve().parents[1].parent / "shared" / "data")


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
