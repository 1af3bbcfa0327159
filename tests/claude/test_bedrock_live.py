"""Against real AWS Bedrock: opt-in, skipped unless AWS credentials (AWS_ACCESS_KEY_ID or
AWS_PROFILE) and THINKAGENT_BEDROCK_MODEL (a Claude model or inference profile id your account
can use, e.g. us.anthropic.claude-sonnet-4-5-20250929-v1:0) are in the environment.

    THINKAGENT_BEDROCK_MODEL=... python -m pytest tests/claude/test_bedrock_live.py -m live
"""

from __future__ import annotations

import json
import os

import pytest

from tests.support.claude import TOOLS, run
from thinkagent import Agent, ProviderError, dump_messages, load_messages
from thinkagent.providers.claude import BedrockModel, ClaudeThinking

MODEL = os.environ.get("THINKAGENT_BEDROCK_MODEL", "")
pytestmark = [
    pytest.mark.live,
    pytest.mark.skipif(
        not MODEL or not (os.environ.get("AWS_ACCESS_KEY_ID") or os.environ.get("AWS_PROFILE")),
        reason="needs AWS credentials and THINKAGENT_BEDROCK_MODEL",
    ),
]


@pytest.mark.parametrize("streamed", [False, True], ids=["converse", "stream"])
async def test_thinking_tool_loop_replays(streamed: bool) -> None:
    agent = Agent(BedrockModel(MODEL, thinking=ClaudeThinking.budget(2048)), tools=TOOLS)
    result = await run(
        agent, "What's the weather and the local time in Paris? Use the tools.", streamed=streamed
    )
    assert [c for m in result.messages for c in m.tool_calls] and result.output
    assert any(b.is_signed or b.is_redacted for m in result.messages for b in m.thinking)
    history = load_messages(dump_messages(result.messages))
    assert (await agent.run("Thanks. Which city was that again?", history=history)).output


async def test_a_changed_signature_is_refused() -> None:
    agent = Agent(BedrockModel(MODEL, thinking=ClaudeThinking.budget(2048)), tools=TOOLS)
    result = await agent.run("What's the weather in Paris? Use the tool.")
    k = next(i for i, m in enumerate(result.messages) if m.tool_calls)
    data = json.loads(dump_messages(result.messages[: k + 2]))
    block = next(p for p in data[k]["parts"] if p.get("signature"))
    signature = block["signature"]
    i = len(signature) // 2
    block["signature"] = signature[:i] + ("A" if signature[i] != "A" else "B") + signature[i + 1 :]
    with pytest.raises(ProviderError) as caught:
        await agent.run(None, history=load_messages(json.dumps(data)))
    assert caught.value.status == 400
