"""The emulator's compatible hosts as of December, through the unmodified official SDK: what
each one returns and refuses (Fireworks, Together's GLM-5.3, Cerebras' GLM, Gemini's
OpenAI-compatible endpoint)."""

from __future__ import annotations

from typing import Any

import openai
import pytest

from thinkagent.emulator import Emulator

USER = {"role": "user", "content": "What's the weather in Paris?"}
TOOLS: list[Any] = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Current weather for a city.",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            },
        },
    }
]


def knob(emu: Emulator, name: str) -> openai.AsyncOpenAI:
    return emu.openai_client(base_url=f"{emu.url}/{name}/v1", max_retries=0)


async def test_fireworks_takes_two_reasoning_histories(emu: Emulator) -> None:
    client = knob(emu, "fireworks")
    done = await client.chat.completions.create(
        model="m", messages=[USER], extra_body={"reasoning_history": "preserved"}
    )
    assert (done.choices[0].message.model_extra or {})["reasoning_content"]
    with pytest.raises(openai.BadRequestError) as exc:
        await client.chat.completions.create(
            model="m", messages=[USER], extra_body={"reasoning_history": "all"}
        )
    assert "Invalid value: 'all'" in str(exc.value.body)


async def test_together_returns_glm_5_3s_reasoning_in_reasoning_content(emu: Emulator) -> None:
    client = knob(emu, "together")
    glm = await client.chat.completions.create(
        model="zai-org/GLM-5.3", messages=[USER], extra_body={"reasoning": {"enabled": False}}
    )
    extra = glm.choices[0].message.model_extra or {}
    assert extra["reasoning_content"] and "reasoning" not in extra  # it cannot stop thinking
    other = await client.chat.completions.create(model="deepseek-ai/DeepSeek-V4", messages=[USER])
    assert (other.choices[0].message.model_extra or {})["reasoning"]


async def test_cerebras_glm_reads_earlier_reasoning_from_the_content(
    emu: Emulator, openai_client: openai.AsyncOpenAI
) -> None:
    first = await openai_client.chat.completions.create(
        model="zai-glm-4.7", messages=[USER], tools=TOOLS
    )
    message = first.choices[0].message
    reasoning = (message.model_extra or {})["reasoning"]
    assert reasoning and message.tool_calls
    call = message.tool_calls[0]
    answer = {"role": "tool", "tool_call_id": call.id, "content": "sunny"}
    call_json: dict[str, Any] = {
        "id": call.id,
        "type": "function",
        "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
    }
    inline = {
        "role": "assistant",
        "content": f"<think>{reasoning}</think>",
        "tool_calls": [call_json],
    }
    field = {
        "role": "assistant",
        "content": None,
        "reasoning": reasoning,
        "tool_calls": [call_json],
    }
    seen = []
    for assistant in (inline, field):
        reply = await openai_client.chat.completions.create(
            model="zai-glm-4.7", messages=[USER, assistant, answer], tools=TOOLS
        )
        seen.append(reply.id)
    assert seen[0] != seen[1]  # the reasoning in the field is not read: another conversation


async def test_gemini_openai_endpoint_serves_gemini_models_only(emu: Emulator) -> None:
    client = emu.openai_client(base_url=emu.url + "/v1beta/openai", max_retries=0)
    reply = await client.chat.completions.create(
        model="gemini-3-flash-preview", messages=[USER], tools=TOOLS
    )
    (call,) = reply.choices[0].message.tool_calls or []
    google = (call.model_extra or {})["extra_content"]["google"]
    assert google["thought_signature"]
    with pytest.raises(openai.NotFoundError):
        await client.chat.completions.create(model="gpt-5", messages=[USER])
