"""The Claude tests' fixtures: `wire`, each Claude wire in turn, and `wire_client`, its client."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.claude import WIRES, Wire
from thinkagent.emulator import Emulator


@pytest.fixture(params=WIRES, ids=str)
def wire(request: pytest.FixtureRequest) -> Wire:
    return request.param


@pytest.fixture
def wire_client(wire: Wire, emu: Emulator, request: pytest.FixtureRequest) -> Any:
    """The wire's client without retries (its fixture in `tests/support/fixtures.py`)."""
    return request.getfixturevalue(wire.client_fixture)
