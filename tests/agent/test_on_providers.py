"""Issue 25's defects that live where the agent meets a real adapter (the official SDKs, over
HTTP, against the emulator): media in tool results, the emulator's OpenAI client, models that do
not reason."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from tests.conftest import needs_genai
from thinkagent import Agent, Image, ProviderError
from thinkagent.emulator import Emulator
from thinkagent.providers.anthropic import AnthropicModel, ClaudeThinking
from thinkagent.providers.openai import OpenAIChatModel
from thinkagent.providers.openai_responses import OpenAIResponsesModel

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


def chart(city: str) -> Image:
    """A weather chart for a city."""
    return Image(data=PNG, media_type="image/png")


def get_weather(city: str) -> str:
    """Current weather for a city."""
    return f"sunny in {city}, 21 C"


async def run_chart(model: Any) -> None:
    result = await Agent(model, tools=[chart]).run("Show me the weather chart for Paris.")
    assert "image/png, 70 bytes" in result.output  # the emulator saw the image, intact
    assert [w.code for w in result.warnings] == ["media_moved"]
    kept = result.messages[2].tool_results[0]
    assert kept.media[0].data == PNG  # the evidence keeps it in the result


@needs_genai
async def test_media_in_tool_results_on_gemini_2_5(emu: Emulator) -> None:
    from thinkagent.providers.gemini import GeminiModel

    client = emu.gemini_client()
    await run_chart(GeminiModel("gemini-2.5-flash", client=client))
    sent = emu.requests[-1].body["contents"][-1]["parts"]
    assert "functionResponse" in sent[0] and "inlineData" in sent[1]


async def test_media_in_tool_results_on_openai_chat(openai_client: Any, emu: Emulator) -> None:
    await run_chart(OpenAIChatModel("gpt-5", client=openai_client, dialect="openai"))
    messages = emu.requests[-1].body["messages"]
    assert messages[-2]["role"] == "tool"
    assert messages[-1]["role"] == "user"
    assert messages[-1]["content"][0]["type"] == "image_url"


async def test_the_emulators_openai_client_is_taken_as_the_compatible_dialect(
    openai_client: Any,
) -> None:
    """Defect 4 (issue 25): `OpenAIChatModel(client=emu.openai_client())` resolved to the
    capture-only `compatible` dialect (no images, no native output), unlike production."""
    model = OpenAIChatModel("gpt-5", client=openai_client)
    assert model.dialect.name == "openai" and model.scope == "openai"
    assert model.profile.native_output and model.profile.media.accepts("image/png")
    await run_chart(model)


async def test_a_compatible_route_of_the_emulator_declares_no_dialect(emu: Emulator) -> None:
    client = emu.openai_client(base_url=f"{emu.url}/vllm/v1")
    assert OpenAIChatModel("Qwen/Qwen3-8B", client=client).dialect.name == "compatible"
    await client.close()


async def test_the_thinking_knob_sends_thinking_to_models_that_have_none(
    anthropic_client: Any, openai_client: Any, emu: Emulator
) -> None:
    """Defect 7 (issue 25): thinking went to claude-3-5-haiku and reasoning to gpt-4.1 with no
    warning. The profiles know which models reason: the setting is not sent, with a warning."""
    models = [
        AnthropicModel("claude-3-5-haiku-20241022", client=anthropic_client),
        OpenAIChatModel("gpt-4.1", client=openai_client),
        OpenAIResponsesModel("gpt-4.1", client=openai_client),
    ]
    for model in models:
        assert model.profile.reasoning is False
        result = await Agent(model, model_settings={"thinking": "high"}).run("Hello there.")
        assert [w.code for w in result.warnings] == ["thinking_unsupported"], model
        body = emu.requests[-1].body
        assert not {"thinking", "reasoning", "reasoning_effort"} & body.keys(), body
        silent = await Agent(model, model_settings={"thinking": False}).run("Hello there.")
        assert silent.warnings == []  # nothing to turn off: nothing said


@pytest.mark.parametrize(
    "name",
    ["claude-sonnet-3-7", "claude-3-7-sonnet-20250219", "claude-haiku-4-5", "claude-opus-5-5"],
)
def test_claude_models_that_reason(name: str) -> None:
    assert AnthropicModel(name, client=object()).profile.reasoning  # type: ignore[arg-type]


@needs_genai
def test_gemini_models_that_reason(emu: Emulator) -> None:
    from thinkagent.providers.gemini import GeminiModel

    client = emu.gemini_client()

    def reasons(name: str) -> bool:
        return GeminiModel(name, client=client).profile.reasoning

    assert reasons("gemini-2.5-flash") and reasons("gemini-3-pro-preview")
    assert not reasons("gemini-2.0-flash") and not reasons("gemini-1.5-pro")


async def test_the_emulator_refuses_thinking_as_the_services_do(
    anthropic_client: Any, openai_client: Any
) -> None:
    """A model's own thinking config reaches the service: the emulator answers as it does."""
    claude = AnthropicModel(
        "claude-3-5-haiku-20241022",
        client=anthropic_client,
        thinking=ClaudeThinking.budget(2048),
    )
    with pytest.raises(ProviderError) as info:
        await Agent(claude).run("Hello there.")
    assert info.value.status == 400
    assert info.value.message == "'claude-3-5-haiku-20241022' does not support thinking."

    from thinkagent.providers.openai import OpenAIThinking

    gpt = OpenAIResponsesModel(
        "gpt-4.1", client=openai_client, thinking=OpenAIThinking(effort="low")
    )
    with pytest.raises(ProviderError) as info:
        await Agent(gpt).run("Hello there.")
    assert info.value.message == (
        "Unsupported parameter: 'reasoning.effort' is not supported with this model."
    )
