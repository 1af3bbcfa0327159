"""Histories persisted by thinkagent 0.1.0 as it was before the adapters moved into family
packages (ADR 29), one per wire API and kind of proof (`persisted/`, written by that version
against its own emulator): they load, re-dump byte for byte, and continue on today's adapters."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conftest import needs_genai
from thinkagent import Agent, Model, dump_messages, load_messages, validate_history
from thinkagent.emulator import Emulator

PERSISTED = Path(__file__).parent / "persisted"
FILES = sorted(PERSISTED.glob("*.json"))


def get_weather(city: str) -> str:
    """Current weather for a city."""
    return f"sunny in {city}, 21 C"


def test_every_wire_api_has_a_persisted_history() -> None:
    assert {f.stem for f in FILES} == {
        "anthropic",
        "anthropic-omitted",
        "anthropic-redacted",
        "bedrock",
        "deepseek",
        "gemini",
        "responses",
        "vertex",
    }


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_an_old_history_loads_and_redumps_byte_exact(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    messages = load_messages(text)
    validate_history(messages)
    assert dump_messages(messages) == text
    assert any(m.thinking for m in messages)


def model_for(name: str, emu: Emulator, clients: dict[str, Any]) -> Model:
    from thinkagent.providers.anthropic import AnthropicModel, ClaudeThinking
    from thinkagent.providers.bedrock import BedrockModel
    from thinkagent.providers.openai import OpenAIChatModel

    # The histories were made on the emulator standing in for the Claude API: its scope.
    if name == "anthropic-omitted":
        return AnthropicModel("claude-opus-4-7", client=clients["anthropic"], scope="anthropic")
    if name.startswith("anthropic"):
        return AnthropicModel(
            "claude-sonnet-4-5",
            client=clients["anthropic"],
            thinking=ClaudeThinking.budget(2048),
            scope="anthropic",
        )
    if name == "bedrock":
        return BedrockModel(
            "anthropic.claude-sonnet-4-5-20250929-v1:0",
            client=clients["bedrock"],
            thinking=ClaudeThinking.budget(2048),
        )
    if name == "deepseek":
        return OpenAIChatModel("deepseek-reasoner", client=clients["openai"], dialect="deepseek")
    from thinkagent.providers.gemini import GeminiModel

    if name == "gemini":
        return GeminiModel("gemini-3-pro-preview", client=clients["gemini"])
    return GeminiModel("gemini-2.5-pro", client=clients["vertex"])


@pytest.mark.parametrize(
    "name", ["anthropic", "anthropic-omitted", "anthropic-redacted", "bedrock", "deepseek"]
)
async def test_an_old_history_continues_with_its_proofs_verified(
    name: str,
    emu: Emulator,
    anthropic_client: Any,
    bedrock_client: Any,
    openai_client: Any,
) -> None:
    history = load_messages((PERSISTED / f"{name}.json").read_text(encoding="utf-8"))
    clients = {"anthropic": anthropic_client, "bedrock": bedrock_client, "openai": openai_client}
    result = await Agent(model_for(name, emu, clients), tools=[get_weather]).run(
        "And in Madrid?", history=history
    )
    assert result.output
    assert result.messages[: len(history)] == history
    sent = str(emu.requests[0].body)
    proofs = [p for m in history for b in m.thinking if (p := b.signature or b.redacted)]
    if proofs:
        assert any(p in sent for p in proofs)  # the old proofs went back
    else:
        assert "reasoning" in sent  # the old reasoning went back


@needs_genai
@pytest.mark.parametrize("name", ["gemini", "vertex"])
async def test_an_old_gemini_history_continues_with_its_signatures_verified(
    name: str, emu: Emulator, gemini_client: Any, vertex_client: Any
) -> None:
    history = load_messages((PERSISTED / f"{name}.json").read_text(encoding="utf-8"))
    clients = {"gemini": gemini_client, "vertex": vertex_client}
    result = await Agent(model_for(name, emu, clients), tools=[get_weather]).run(
        "And in Madrid?", history=history
    )
    assert result.output
    assert "thoughtSignature" in str(emu.requests[0].body)
