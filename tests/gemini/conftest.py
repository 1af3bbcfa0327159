"""Shared fixtures: one emulator per test module, reset before each test; a Gemini API and a
Vertex AI client per test (an async client belongs to the test's event loop)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from thinkagent.emulator import Emulator


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
