"""The OpenAI tests' clients come from the suite's fixtures (`openai_client`, `azure_client`,
without retries); `retrying_openai_client` keeps the SDK's default retries, for the tests of
retried faults."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from thinkagent.emulator import Emulator


@pytest.fixture
async def retrying_openai_client(emu: Emulator) -> AsyncIterator[Any]:
    client = emu.openai_client()
    yield client
    await client.close()
