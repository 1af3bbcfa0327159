"""The emulator (`emu`, from the suite's conftest) is reset before each test, and every client
its factories made during the test is closed when the test ends (an async client belongs to
the test's event loop)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from thinkagent.emulator import Emulator


@pytest.fixture(autouse=True)
async def _fresh(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[None]:
    if "emu" not in request.fixturenames:
        yield
        return
    emulator: Emulator = request.getfixturevalue("emu")
    emulator.reset()
    made: list[Any] = []
    for name in ("openai_client", "azure_client"):
        factory = getattr(emulator, name)

        def tracked(*args: Any, _factory: Any = factory, **kwargs: Any) -> Any:
            client = _factory(*args, **kwargs)
            made.append(client)
            return client

        monkeypatch.setattr(emulator, name, tracked)
    yield
    for client in made:
        await client.close()
