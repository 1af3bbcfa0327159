"""One emulator per test module (reset before each test) and boto3 clients pointed at it (a
boto3 client is synchronous and thread-safe: one per module)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from botocore.config import Config

from thinkagent.emulator import Emulator


@pytest.fixture(scope="module")
def client(emu: Emulator) -> Iterator[Any]:
    """No retries: a fault reaches the adapter as it happened."""
    client = emu.bedrock_client(config=Config(retries={"total_max_attempts": 1}))
    yield client
    client.close()


@pytest.fixture(scope="module")
def retrying_client(emu: Emulator) -> Iterator[Any]:
    """botocore's standard retry mode (3 attempts)."""
    client = emu.bedrock_client(config=Config(retries={"mode": "standard"}))
    yield client
    client.close()
