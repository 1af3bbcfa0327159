"""The emulator's built-in tools: when the brain uses them (provider-neutral), scripted uses
rendered on a wire, and the refusals each wire applies to declarations it does not take."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from thinkagent.emulator import Emulator
from thinkagent.emulator.brain import plan
from thinkagent.emulator.model import (
    Conversation,
    Reply,
    ServerToolSpec,
    ServerUse,
    Settings,
    ToolSpec,
    Turn,
)

WEATHER = ToolSpec(
    "get_weather",
    "Current weather for a city.",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)


def conversation(*turns: Turn, server: tuple[ServerToolSpec, ...] = ()) -> Conversation:
    return Conversation(turns=turns, tools=(WEATHER,), server_tools=server)


def test_no_declared_built_in_tool_means_no_use() -> None:
    reply = plan(conversation(Turn("user", "Search the web for news in Paris")), Settings())
    assert reply.server_uses == ()


def test_a_search_runs_once_per_tool_loop_before_the_function_tools() -> None:
    search = (ServerToolSpec("web_search"),)
    question = Turn("user", "Search the web for today's news in Paris, then the weather there.")
    first = plan(conversation(question, server=search), Settings(thinking=True))
    [use] = first.server_uses
    assert use.kind == "web_search" and use.hits[0].url.startswith("https://")
    assert first.tool_calls[0].name == "get_weather"
    looped = conversation(
        question,
        Turn("assistant", calls=(), server_uses=(use,)),
        server=search,
    )
    assert plan(looped, Settings()).server_uses == ()


def test_a_question_that_calls_for_no_built_in_tool_uses_none() -> None:
    reply = plan(
        conversation(
            Turn("user", "What's the weather in Paris?"), server=(ServerToolSpec("web_search"),)
        ),
        Settings(),
    )
    assert reply.server_uses == () and reply.tool_calls


def test_an_mcp_call_needing_approval_ends_the_turn_and_runs_once_approved() -> None:
    dice = (ServerToolSpec("mcp", name="dice", tools=("roll",), approval=True),)
    question = Turn("user", "Roll the dice")
    asked = plan(Conversation(turns=(question,), server_tools=dice), Settings())
    [pending] = asked.server_uses
    assert pending.approval == "pending" and asked.text == "" and asked.tool_calls == ()
    pending = ServerUse(**{**pending.__dict__, "id": "mcpr_1"})
    turns = (
        question,
        Turn("assistant", server_uses=(pending,)),
        Turn("user", approvals=(("mcpr_1", True),)),
    )
    ran = plan(Conversation(turns=turns, server_tools=dice), Settings())
    [use] = ran.server_uses
    assert (use.approval, use.approval_id, use.name) == ("approved", "mcpr_1", "roll")
    assert "roll answered" in ran.text
    denied = (
        question,
        Turn("assistant", server_uses=(pending,)),
        Turn("user", approvals=(("mcpr_1", False),)),
    )
    refused = plan(Conversation(turns=denied, server_tools=dice), Settings())
    assert refused.server_uses == () and "did not approve" in refused.text


async def test_a_scripted_code_execution_result_is_rendered_on_the_wire() -> None:
    async with Emulator() as emu:
        emu.script(
            "openai-responses",
            [
                Reply(
                    text="It printed 42.",
                    server_uses=[
                        ServerUse(
                            "code_execution",
                            "code_execution",
                            {"code": "print(6*7)"},
                            output="42\n",
                        )
                    ],
                )
            ],
        )
        client = emu.openai_client()
        response = await client.responses.create(
            model="gpt-5",
            input="run it",
            tools=[{"type": "code_interpreter", "container": {"type": "auto"}}],
            include=["code_interpreter_call.outputs"],
        )
        item: Any = response.output[0]
        assert item.type == "code_interpreter_call" and item.code == "print(6*7)"
        assert item.outputs[0].logs == "42\n"
        assert response.output_text == "It printed 42."


def _gemini(emu: Emulator, path: str, body: dict[str, Any], **headers: str) -> httpx.Response:
    return httpx.post(f"{emu.url}{path}", json=body, headers=headers)


@pytest.mark.parametrize(
    ("path", "headers", "tool_config", "unknown"),
    [
        (
            "/v1/projects/p/locations/global/publishers/google/models/gemini-3-pro-preview:generateContent",
            {"authorization": "Bearer t"},
            {"includeServerSideToolInvocations": True},
            "includeServerSideToolInvocations",
        ),
        (
            "/v1beta/models/gemini-3-pro-preview:generateContent",
            {"x-goog-api-key": "k"},
            {"functionCallingConfig": {"streamFunctionCallArguments": True}},
            "streamFunctionCallArguments",
        ),
    ],
)
def test_each_gemini_platform_refuses_the_other_ones_tool_config_field(
    path: str, headers: dict[str, str], tool_config: dict[str, Any], unknown: str
) -> None:
    with Emulator() as emu:
        body = {
            "contents": [{"role": "user", "parts": [{"text": "hi"}]}],
            "toolConfig": tool_config,
        }
        response = _gemini(emu, path, body, **headers)
    assert response.status_code == 400
    assert f'Unknown name "{unknown}"' in response.json()["error"]["message"]


async def test_claude_refuses_an_mcp_toolset_without_its_beta_or_its_server() -> None:
    import anthropic

    async with Emulator() as emu:
        client = emu.anthropic_client(max_retries=0)
        base: dict[str, Any] = {
            "model": "claude-sonnet-4-6",
            "max_tokens": 100,
            "messages": [{"role": "user", "content": "roll"}],
            "tools": [{"type": "mcp_toolset", "mcp_server_name": "dice"}],
        }
        beta = {"anthropic-beta": "mcp-client-2025-11-20"}
        with pytest.raises(anthropic.BadRequestError, match="mcp-client-2025-11-20"):
            await client.messages.create(**base)
        with pytest.raises(anthropic.BadRequestError, match="no MCP server named 'dice'"):
            await client.messages.create(**base, extra_headers=beta)
        server = {"type": "url", "url": "https://d.example", "name": "dice"}
        await client.messages.create(
            **base, extra_headers=beta, extra_body={"mcp_servers": [server]}
        )
        await client.close()
