"""The suite's fixtures, one idiom for every vendor client.

`emu` is one emulator per test module, reset (requests, scripts, faults) before each test that
uses it. Each client fixture is named after the emulator factory that makes it
(`anthropic_client`, `bedrock_client`, `gemini_client`, `vertex_client`, `openai_client`,
`azure_client`), is built without retries (a fault reaches the adapter as it happened) and is
closed when the test ends; the `retrying_` variants keep the SDK's default retries. Async
clients are per test (one belongs to the test's event loop); boto3 clients, synchronous and
thread-safe, are per module.
"""

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
async def anthropic_client(emu: Emulator) -> AsyncIterator[Any]:
    client = emu.anthropic_client(max_retries=0)
    yield client
    await client.close()


@pytest.fixture
async def retrying_anthropic_client(emu: Emulator) -> AsyncIterator[Any]:
    client = emu.anthropic_client()
    yield client
    await client.close()


@pytest.fixture
async def openai_client(emu: Emulator) -> AsyncIterator[Any]:
    client = emu.openai_client(max_retries=0)
    yield client
    await client.close()


@pytest.fixture
async def retrying_openai_client(emu: Emulator) -> AsyncIterator[Any]:
    client = emu.openai_client()
    yield client
    await client.close()


@pytest.fixture
async def azure_client(emu: Emulator) -> AsyncIterator[Any]:
    client = emu.azure_client(max_retries=0)
    yield client
    await client.close()


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


@pytest.fixture(scope="module")
def bedrock_client(emu: Emulator) -> Iterator[Any]:
    from botocore.config import Config

    client = emu.bedrock_client(config=Config(retries={"total_max_attempts": 1}))
    yield client
    client.close()


@pytest.fixture(scope="module")
def retrying_bedrock_client(emu: Emulator) -> Iterator[Any]:
    """botocore's standard retry mode (3 attempts)."""
    from botocore.config import Config

    client = emu.bedrock_client(config=Config(retries={"mode": "standard"}))
    yield client
    client.close()
