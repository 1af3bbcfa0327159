"""One emulator per test module (reset before each test); vendor clients per test (an async
client belongs to the test's event loop)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import anthropic
import pytest

from thinkagent.emulator import Emulator


@pytest.fixture
async def client(emu: Emulator) -> AsyncIterator[anthropic.AsyncAnthropic]:
    """No retries: a fault reaches the adapter as it happened."""
    client = emu.anthropic_client(max_retries=0)
    yield client
    await client.close()


@pytest.fixture
async def retrying_client(emu: Emulator) -> AsyncIterator[anthropic.AsyncAnthropic]:
    """The SDK's default retries (2)."""
    client = emu.anthropic_client()
    yield client
    await client.close()
