"""A credential given to any client never shows: not in an error (its text, repr, traceback
or pickle), not in a model's, agent's or result's repr, not in the emulator's recording, not
in a dumped history, not in a log line of thinkagent's."""

from __future__ import annotations

import logging
import pickle
import traceback
from collections.abc import AsyncGenerator, Callable
from contextlib import asynccontextmanager

import pytest
from botocore.config import Config

from thinkagent import Agent, Model, ThinkAgentError, dump_messages
from thinkagent.emulator import Emulator, Fault

from ..conftest import needs_genai
from .wires import QUESTION, get_weather, outcome

SECRET = "sk-FAKE-s3cr3t-d0-n0t-l3ak-0123456789"
AWS_ID = "AKIAFAKES3CR3T0123456"
AWS_SECRET = "fake/aws/s3cr3t+do-not-leak/0123456789ab"
AWS_TOKEN = "FAKE-session-token-do-not-leak-0123456789"
SECRETS = (SECRET, AWS_ID, AWS_SECRET, AWS_TOKEN)


@asynccontextmanager
async def secret_model(emu: Emulator, client: str) -> AsyncGenerator[Model]:
    """A model whose client holds the fake secrets, without retries."""
    if client == "anthropic":
        from thinkagent.providers.anthropic import AnthropicModel

        anthropic = emu.anthropic_client(api_key=SECRET, max_retries=0)
        yield AnthropicModel("claude-sonnet-4-5", client=anthropic)
        await anthropic.close()
    elif client == "bedrock":
        from thinkagent.providers.bedrock import BedrockModel

        bedrock = emu.bedrock_client(
            aws_access_key_id=AWS_ID,
            aws_secret_access_key=AWS_SECRET,
            aws_session_token=AWS_TOKEN,
            config=Config(retries={"total_max_attempts": 1}),
        )
        yield BedrockModel("anthropic.claude-sonnet-4-5-20250929-v1:0", client=bedrock)
        bedrock.close()
    elif client in ("gemini", "vertex"):
        from google.oauth2.credentials import Credentials

        from thinkagent.providers.gemini import GeminiModel

        genai = (
            emu.gemini_client(api_key=SECRET)
            if client == "gemini"
            else emu.vertex_client(credentials=Credentials(token=SECRET))  # pyright: ignore[reportCallIssue]
        )
        yield GeminiModel("gemini-2.5-flash", client=genai)
        await genai.aio.aclose()
    else:
        from thinkagent.providers.openai import OpenAIChatModel
        from thinkagent.providers.openai_responses import OpenAIResponsesModel

        openai = (
            emu.azure_client(api_key=SECRET, max_retries=0)
            if client == "azure"
            else emu.openai_client(api_key=SECRET, max_retries=0)
        )
        if client == "responses":
            yield OpenAIResponsesModel("gpt-5", client=openai)
        else:
            yield OpenAIChatModel("gpt-5", client=openai)
        await openai.close()


def shows_no_secret(text: str | bytes, what: str) -> None:
    data = text.encode() if isinstance(text, str) else text
    for secret in SECRETS:
        assert secret.encode() not in data, f"{what} shows a credential"


class _Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))


FAILURES: dict[str, Callable[[], Fault]] = {
    "401": lambda: Fault.http(401),
    "429": Fault.rate_limited,
    "500": lambda: Fault.http(500),
    "cut": Fault.cut,
    "malformed": Fault.malformed,
}


@pytest.mark.parametrize("streamed", [False, True], ids=["run", "run_stream"])
@pytest.mark.parametrize(
    "client",
    [
        "anthropic",
        "bedrock",
        pytest.param("gemini", marks=needs_genai),
        pytest.param("vertex", marks=needs_genai),
        "openai",
        "azure",
        "responses",
    ],
)
async def test_a_clients_credentials_never_show(emu: Emulator, client: str, streamed: bool) -> None:
    lines = _Lines()
    thinkagent_log = logging.getLogger("thinkagent")
    thinkagent_log.addHandler(lines)
    level = thinkagent_log.level
    thinkagent_log.setLevel(logging.DEBUG)
    try:
        async with secret_model(emu, client) as model:
            agent = Agent(model, tools=[get_weather])
            shows_no_secret(repr(model) + repr(agent), "a repr")
            result = await outcome(agent, QUESTION, streamed=streamed)
            assert not isinstance(result, ThinkAgentError), result
            shows_no_secret(repr(result) + dump_messages(result.messages), "a result")
            for failure in FAILURES.values():
                emu.inject(failure())
                error = await outcome(agent, QUESTION, streamed=streamed)
                assert isinstance(error, ThinkAgentError)
                shows_no_secret(str(error) + repr(error), "an error")
                shows_no_secret("".join(traceback.format_exception(error)), "a traceback")
                shows_no_secret(pickle.dumps(error), "a pickled error")
                shows_no_secret(dump_messages(error.messages), "an error's history")
    finally:
        thinkagent_log.removeHandler(lines)
        thinkagent_log.setLevel(level)
    shows_no_secret(repr(emu.requests), "the emulator's recording")
    shows_no_secret("\n".join(lines.lines), "thinkagent's log")
