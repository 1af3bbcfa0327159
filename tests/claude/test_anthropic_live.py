"""Against the real Anthropic API: opt-in, skipped unless ANTHROPIC_API_KEY is set.

    ANTHROPIC_API_KEY=... python -m pytest tests/claude/test_anthropic_live.py -m live

THINKAGENT_ANTHROPIC_MODEL picks the model (default claude-sonnet-4-6).
"""

from __future__ import annotations

import json
import os

import pytest

from tests.support.claude import MAGIC, TOOLS, run
from thinkagent import Agent, ProviderError, dump_messages, load_messages
from thinkagent.providers.claude import AnthropicModel, ClaudeThinking

pytestmark = [
    pytest.mark.live,
    pytest.mark.skipif(not os.environ.get("ANTHROPIC_API_KEY"), reason="needs ANTHROPIC_API_KEY"),
]

MODEL = os.environ.get("THINKAGENT_ANTHROPIC_MODEL", "claude-sonnet-4-6")


@pytest.mark.parametrize("streamed", [False, True], ids=["json", "streamed"])
async def test_thinking_tool_loop_replays(streamed: bool) -> None:
    agent = Agent(AnthropicModel(MODEL, thinking=ClaudeThinking.adaptive()), tools=TOOLS)
    result = await run(
        agent, "What's the weather and the local time in Paris? Use the tools.", streamed=streamed
    )
    calls = [c for m in result.messages for c in m.tool_calls]
    assert calls and result.output
    assert any(b.is_signed or b.is_redacted for m in result.messages for b in m.thinking)
    # the persisted history continues on a new turn
    history = load_messages(dump_messages(result.messages))
    follow_up = await agent.run("Thanks. Which city was that again?", history=history)
    assert "Paris" in follow_up.output


async def test_a_changed_signature_is_refused() -> None:
    agent = Agent(AnthropicModel(MODEL, thinking=ClaudeThinking.budget(2048)), tools=TOOLS)
    result = await agent.run("What's the weather in Paris? Use the tool.")
    k = next(i for i, m in enumerate(result.messages) if m.tool_calls)
    data = json.loads(dump_messages(result.messages[: k + 2]))
    block = next(p for p in data[k]["parts"] if p.get("signature"))
    signature = block["signature"]
    i = len(signature) // 2
    block["signature"] = signature[:i] + ("A" if signature[i] != "A" else "B") + signature[i + 1 :]
    with pytest.raises(ProviderError, match="signature") as caught:
        await agent.run(None, history=load_messages(json.dumps(data)))
    assert caught.value.status == 400


async def test_redacted_thinking_round_trips() -> None:
    agent = Agent(AnthropicModel(MODEL, thinking=ClaudeThinking.budget(2048)))
    first = await agent.run(MAGIC)
    assert any(b.is_redacted for b in first.messages[1].thinking)
    second = await agent.run("What was that?", history=first.messages)
    assert second.output
