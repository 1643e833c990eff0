from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
SHARED_DATA = SHARED / "data"


def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared data sets not found at {SHARED_DATA} (../shared is absent)")
    return SHARED_DATA


@pytest.fixture
def db():
    from anonsql.database import Database

    d = Database.open(":memory:")
    yield d
    d.close()


@pytest.fixture
def adult_dir() -> Path:
    return shared_data() / "adult"
