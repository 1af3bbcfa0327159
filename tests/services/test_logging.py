"""The `thinkagent` logger: nothing configured at import, a DEBUG line per request and per
response without proofs or keys, a WARNING for every adjustment an adapter reports and for
reasoning a request leaves out; and the missing-key error without the SDK's traceback."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import traceback
from collections.abc import Iterator
from typing import Any

import pytest

from thinkagent import (
    Agent,
    ConfigurationError,
    Message,
    TextPart,
    WarningEvent,
)
from thinkagent.emulator import Emulator
from thinkagent.providers.anthropic import AnthropicModel, ClaudeThinking
from thinkagent.testing import ScriptedModel, ScriptedResponse

from .models import (
    GEMINI_SIGNATURE,
    GEMINI_TURN,
    get_time,
    get_weather,
    proofs_of,
    script_parallel_calls,
)

SECRET = "sk-ant-services-test-0123456789abcdef"


class Capture(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)

    def lines(self, level: int) -> list[str]:
        return [r.getMessage() for r in self.records if r.levelno == level]


@pytest.fixture
def captured() -> Iterator[Capture]:
    capture = Capture()
    logger = logging.getLogger("thinkagent")
    level = logger.level
    logger.addHandler(capture)
    logger.setLevel(logging.DEBUG)
    yield capture
    logger.removeHandler(capture)
    logger.setLevel(level)


def test_importing_thinkagent_configures_no_logging() -> None:
    probe = """
import json, logging
root = list(logging.root.handlers)
import thinkagent, thinkagent.agent, thinkagent.providers.anthropic, thinkagent.emulator
logger = logging.getLogger("thinkagent")
print(json.dumps({"root": list(logging.root.handlers) == root, "level": logger.level,
                  "handlers": [type(h).__name__ for h in logger.handlers]}))
"""
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert json.loads(done.stdout) == {"root": True, "level": 0, "handlers": ["NullHandler"]}


def test_a_warning_is_not_printed_by_an_unconfigured_application() -> None:
    # Python's last-resort handler prints warnings of loggers without handlers to stderr:
    # the NullHandler keeps a library quiet until the application configures logging.
    probe = """
import asyncio
from thinkagent import Agent, Message, TextPart, WarningEvent
from thinkagent.testing import ScriptedModel, ScriptedResponse
answer = Message(role="assistant", parts=(TextPart(text="Hi."),))
warning = WarningEvent("thinking_clamped", "clamped", "scripted")
asyncio.run(Agent(ScriptedModel([ScriptedResponse(answer, warnings=[warning])])).run("Hello"))
"""
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stderr == ""


async def test_one_debug_line_per_request_and_response_without_proofs_or_keys(
    emu: Emulator, captured: Capture
) -> None:
    client = emu.anthropic_client(api_key=SECRET, max_retries=0)
    try:
        script_parallel_calls(emu, "anthropic")
        model = AnthropicModel(
            "claude-sonnet-4-6", client=client, thinking=ClaudeThinking.adaptive()
        )
        result = await Agent(model, tools=[get_weather, get_time]).run("Weather and time?")
    finally:
        await client.close()
    debug = captured.lines(logging.DEBUG)
    requests = [line for line in debug if line.startswith("request ")]
    responses = [line for line in debug if line.startswith("response ")]
    assert len(requests) == len(responses) == 2 == len(emu.requests)
    assert (
        "scope=anthropic@localhost model=claude-sonnet-4-6 messages=1 parts=text:1 tools=2"
        in requests[0]
    )
    assert "thinking_sent=1" in requests[1]
    first = result.new_messages[1]
    proof = first.thinking[0].signature
    assert proof is not None
    assert f"proof_chars={len(proof)}" in requests[1]
    assert "parts=text:1,thinking:1,tool_call:2" in responses[0]
    assert "finish=tool_call" in responses[0]
    text = "\n".join(r.getMessage() for r in captured.records)
    secrets = proofs_of(result.messages)
    assert secrets and not [p for p in secrets if p in text]
    assert SECRET not in text


async def test_every_warning_an_adapter_reports_is_logged(captured: Capture) -> None:
    warning = WarningEvent(
        "thinking_clamped",
        "scripted-model has no thinking level 'max'; 'high' was used",
        "scripted",
    )
    answer = Message(role="assistant", parts=(TextPart(text="Hi."),))
    for streamed in (False, True):
        captured.records.clear()
        agent = Agent(ScriptedModel([ScriptedResponse(answer, warnings=[warning])]))
        if streamed:
            async with agent.run_stream("Hello") as stream:
                async for _ in stream:
                    pass
        else:
            await agent.run("Hello")
        assert captured.lines(logging.WARNING) == [
            "scripted-model has no thinking level 'max'; 'high' was used "
            "(thinking_clamped, scope=scripted)"
        ]


async def test_reasoning_left_out_for_another_scope_is_logged_once_per_run(
    anthropic_client: Any, captured: Capture
) -> None:
    model = AnthropicModel(
        "claude-sonnet-4-6", client=anthropic_client, thinking=ClaudeThinking.adaptive()
    )
    await Agent(model, tools=[get_weather]).run(
        "And the weather in Rome?", history=[Message.user("Hello"), GEMINI_TURN]
    )
    warnings = captured.lines(logging.WARNING)
    assert warnings == [
        "1 thinking block(s) from gemini not sent to anthropic@localhost: another scope issued them "
        "(foreign_reasoning='drop')"
    ]
    assert GEMINI_SIGNATURE not in "\n".join(captured.lines(logging.DEBUG))


async def test_the_missing_key_error_comes_without_the_sdks_traceback(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    agent = Agent(AnthropicModel("claude-opus-4-7", thinking=ClaudeThinking.adaptive()))
    with pytest.raises(ConfigurationError, match="set ANTHROPIC_API_KEY") as caught:
        await agent.run("What's the weather in Paris?")
    error = caught.value
    assert error.__cause__ is None and error.__suppress_context__
    printed = "".join(traceback.format_exception(error))
    assert "anthropic/_client.py" not in printed and "The above exception" not in printed
    assert len(printed.splitlines()) < 12
    assert error.messages == [Message.user("What's the weather in Paris?")]
