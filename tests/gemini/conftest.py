"""Shared fixtures: one emulator per test module, reset before each test; a Gemini API and a
Vertex AI client per test (an async client belongs to the test's event loop)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from thinkagent.emulator import Emulator


@pytest.fixture(scope="module")
def emu() -> Iterator[Emulator]:
    with Emulator() as emulator:
        yield emulator


@pytest.fixture(autouse=True)
def _fresh(request: pytest.FixtureRequest) -> None:
    if "emu" in request.fixturenames:
        request.getfixturevalue("emu").reset()


@pytest.fixture
async def gemini_client(emu: Emulator) -> AsyncIterator[Any]:
    client = emu.gemini_client()
    yield client
    await client.aio.aclose()


@pytest.fixture
async def vertex_client(emu: Emulator) -> AsyncIterator[Any]:
    client = emu.vertex_client()
    yield client
    await client.aio.aclose()
