"""Fixtures of the durable-run tests: DBOS on a temporary SQLite file, in this process."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("dbos", reason="durable runs need the dbos extra (thinkagent[dbos])")

from dbos import DBOS

_names = itertools.count()


@pytest.fixture
def sqlite_db(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'dbos.sqlite'}"


@pytest.fixture
def dbos(sqlite_db: str) -> Iterator[type[DBOS]]:
    """DBOS configured on a fresh SQLite file; the test creates its durable agents, then
    calls `DBOS.launch()` (recovery needs them registered first)."""
    DBOS(config={"name": "thinkagent-durable-tests", "system_database_url": sqlite_db})
    yield DBOS
    DBOS.destroy(destroy_registry=True)


@pytest.fixture
def name() -> str:
    """A durable agent name no other test of this process uses."""
    return f"agent{next(_names)}"
