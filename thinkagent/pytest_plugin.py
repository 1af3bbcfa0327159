"""thinkagent's pytest plugin: fixtures for testing your own agents offline.

Registered as a `pytest11` entry point, so it is active in every pytest run of a project that
has thinkagent installed; it changes nothing until a test asks for a fixture, or the
configuration turns the request block on:

- `emulator`: the thinkagent emulator (one per session, its recorded requests, scripts and
  faults reset before each test that uses it): point the official clients at it with
  `emulator.anthropic_client()`, `emulator.openai_client()`...;
- `scripted_model`: a factory of `ScriptedModel`s, taking strings (answers) and messages;
- `test_model`: a `TestModel` (calls every tool, then answers);
- `model_requests`: the list of every request the test's agents sent
  (`CapturedRequest(model, request)`), to assert on.

`thinkagent_block_model_requests = true` in the pytest configuration (or `--block-model-requests`
on the command line) blocks every request to a real provider in every test, with a
`ModelRequestsBlocked` error naming the host; mark a test `@pytest.mark.allow_model_requests`
to let it through. See `docs/testing.md`.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterable, Iterator
from typing import TYPE_CHECKING, Any, cast

import pytest

from .testing import (
    CapturedRequest,
    ScriptedModel,
    ScriptItem,
    TestModel,
    block_model_requests,
    capture_model_requests,
)

if TYPE_CHECKING:
    from .emulator import Emulator

__all__ = ["emulator", "model_requests", "scripted_model", "test_model"]

_INI = "thinkagent_block_model_requests"
_MARK = "allow_model_requests"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini(
        _INI,
        "block requests to real model providers in every test (thinkagent)",
        type="bool",
        default=False,
    )
    parser.addoption(
        "--block-model-requests",
        action="store_true",
        default=False,
        help="block requests to real model providers in every test (thinkagent)",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", f"{_MARK}: let this test reach real model providers (thinkagent)"
    )


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, Any, Any]:
    config = item.config
    blocking = bool(config.getini(_INI)) or bool(config.getoption("--block-model-requests"))
    if not blocking or item.get_closest_marker(_MARK) is not None:
        return (yield)
    with block_model_requests():
        return (yield)


@pytest.fixture(scope="session")
def _thinkagent_emulator() -> Iterator[Emulator]:
    from .emulator import Emulator

    with Emulator() as running:
        yield running


@pytest.fixture
def emulator(_thinkagent_emulator: Emulator) -> Emulator:
    """The thinkagent emulator, with no requests, scripts or faults left from another test."""
    _thinkagent_emulator.reset()
    return _thinkagent_emulator


@pytest.fixture
def scripted_model() -> Callable[..., ScriptedModel]:
    """`scripted_model("Hello!", message, ...)`: a `ScriptedModel` answering in turn with
    each item (a string is a text answer; a `Message`, a `ScriptedResponse`, an exception or a
    function of the request as `ScriptedModel` takes them; a list of items counts as its
    items). Keyword arguments go to `ScriptedModel` (`profile=`, `scope=`...)."""

    def make(*items: ScriptItem | Iterable[ScriptItem], **options: Any) -> ScriptedModel:
        flat: list[ScriptItem] = []
        for item in items:
            if isinstance(item, list | tuple):
                flat.extend(cast("Iterable[ScriptItem]", item))
            else:
                flat.append(cast("ScriptItem", item))
        return ScriptedModel(flat, **options)

    return make


@pytest.fixture
def test_model() -> TestModel:
    """A `TestModel`: calls every tool with valid arguments, then answers."""
    return TestModel()


@pytest.fixture
def model_requests() -> Iterator[list[CapturedRequest]]:
    """Every request this test's agents send to their models, as they sent them
    (`capture_model_requests`)."""
    with capture_model_requests() as captured:
        yield captured
