"""Built-in ("hosted") tools on the Responses API, through the official SDK against the
emulator: declared from the configs, their items as parts in output order and back byte for
byte, streamed equal to not, cited, the remote MCP approval round trip through the agent's
approval flow, and what is refused before sending and by the service."""

from __future__ import annotations

import json
from typing import Any

import openai
import pytest

from tests.support.openai import bodies, get_weather
from thinkagent import (
    Agent,
    CodeExecution,
    ConfigurationError,
    MCPServer,
    Message,
    ProviderError,
    ServerToolCall,
    ServerToolResult,
    TextPart,
    ThinkingBlock,
    ToolCall,
    ToolDenied,
    URLContext,
    WebFetch,
    WebSearch,
    dump_messages,
    load_messages,
)
from thinkagent.emulator import Emulator
from thinkagent.providers.openai_responses import OpenAIResponsesModel

API = "openai-responses"
SEARCH_THEN_WEATHER = "Search the web for today's news in Paris, then tell me the weather there."


def model(client: Any, name: str = "gpt-5") -> OpenAIResponsesModel:
    return OpenAIResponsesModel(name, client=client)


def items(body: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [i for i in body["input"] if isinstance(i, dict) and i.get("type") == kind]


async def test_web_search_in_a_thinking_tool_loop_goes_back_byte_for_byte(
    emu: Emulator, openai_client: Any
) -> None:
    agent = Agent(model(openai_client), tools=[get_weather, WebSearch()])
    result = await agent.run(SEARCH_THEN_WEATHER)
    first, second = bodies(emu, API)
    assert {"type": "web_search"} in first["tools"]
    assert "web_search_call.action.sources" in first["include"]
    turn = result.messages[1]
    assert [type(p) for p in turn.parts] == [
        ThinkingBlock,
        ServerToolCall,
        ServerToolResult,
        ToolCall,
    ]
    call, found = turn.server_tool_calls[0], turn.server_tool_results[0]
    assert (call.builtin, call.type, call.name) == ("web_search", "web_search_call", "web_search")
    assert call.arguments == {"type": "search", "query": SEARCH_THEN_WEATHER}
    assert found.call_id == call.id and found.data is None
    assert isinstance(found.content, list) and found.content[0]["type"] == "url"  # type: ignore[index]
    assert items(second, "web_search_call") == [call.data]
    kinds = [i.get("type") for i in second["input"]]
    assert kinds[1:4] == ["reasoning", "web_search_call", "function_call"]
    assert turn.usage is not None and turn.usage.server_tool_uses == {"web_search": 1}
    assert result.usage.server_tool_uses == {"web_search": 1}


async def test_the_stream_equals_the_response_and_ends_each_server_part(
    emu: Emulator, openai_client: Any
) -> None:
    agent = Agent(model(openai_client), tools=[get_weather, WebSearch()])
    expected = await agent.run(SEARCH_THEN_WEATHER)
    ends: list[Any] = []
    async with agent.run_stream(SEARCH_THEN_WEATHER) as stream:
        async for event in stream:
            if type(event).__name__ == "PartEnd":
                ends.append(event.part)  # type: ignore[attr-defined]
    assert stream.result.messages == expected.messages
    assert [p.kind for p in ends[:4]] == [
        "thinking",
        "server_tool_call",
        "server_tool_result",
        "tool_call",
    ]


async def test_a_persisted_history_with_server_tools_replays_unchanged(
    emu: Emulator, openai_client: Any
) -> None:
    agent = Agent(model(openai_client), tools=[get_weather, WebSearch()])
    first = await agent.run(SEARCH_THEN_WEATHER)
    history = load_messages(dump_messages(first.messages))
    await agent.run("And tomorrow?", history=history)
    last = bodies(emu, API)[-1]
    assert items(last, "web_search_call") == [first.messages[1].server_tool_calls[0].data]


async def test_altered_encrypted_reasoning_beside_a_search_is_refused(
    emu: Emulator, openai_client: Any
) -> None:
    agent = Agent(model(openai_client), tools=[get_weather, WebSearch()])
    first = await agent.run(SEARCH_THEN_WEATHER)
    turn = first.messages[1]
    block = turn.thinking[0]
    assert block.signature is not None
    forged = block.model_copy(update={"signature": block.signature[:-8] + "AAAAAAAA"})
    parts = (forged, *turn.parts[1:])
    history = [*first.messages[:1], turn.model_copy(update={"parts": parts}), *first.messages[2:]]
    with pytest.raises(ProviderError) as raised:
        await agent.run("And tomorrow?", history=history)
    assert raised.value.status == 400
    assert "could not be verified" in str(raised.value)


async def test_a_search_answered_in_the_same_response_cites_its_pages(
    emu: Emulator, openai_client: Any
) -> None:
    agent = Agent(model(openai_client), tools=[WebSearch()])
    result = await agent.run("Search the web for the latest news about Lyon")
    answer = result.messages[1]
    citations = answer.citations
    assert citations and all(c.type == "url_citation" for c in citations)
    assert citations[0].url is not None and citations[0].url in result.output
    text = next(p for p in answer.parts if isinstance(p, TextPart))
    first = citations[0]
    assert first.start is not None and first.end is not None
    assert text.text[first.start : first.end] == first.url
    await agent.run("Thanks", history=result.messages)
    sent = next(i for i in bodies(emu, API)[-1]["input"] if i.get("type") == "message")
    assert sent["content"][0]["annotations"] == [c.data for c in citations]


async def test_code_interpreter_outputs_are_read_and_go_back(
    emu: Emulator, openai_client: Any
) -> None:
    agent = Agent(model(openai_client), tools=[CodeExecution()])
    result = await agent.run("Calculate 2 + 3 with code")
    body = bodies(emu, API)[0]
    assert {"type": "code_interpreter", "container": {"type": "auto"}} in body["tools"]
    assert "code_interpreter_call.outputs" in body["include"]
    call, output = (
        result.messages[1].server_tool_calls[0],
        result.messages[1].server_tool_results[0],
    )
    assert call.arguments == {"code": "print(2 + 3)"} and call.builtin == "code_execution"
    assert output.content == [{"type": "logs", "logs": "5\n"}]
    assert "5" in result.output


# --- remote MCP and its approvals -------------------------------------------------------------


DICE = MCPServer(url="https://dice.example.com/mcp", name="dice", allowed_tools=["roll"])


async def test_a_remote_mcp_call_is_approved_through_the_approval_flow(
    emu: Emulator, openai_client: Any
) -> None:
    agent = Agent(model(openai_client), tools=[DICE])
    stopped = await agent.run("Roll the dice for me")
    assert bodies(emu, API)[0]["tools"] == [
        {
            "type": "mcp",
            "server_label": "dice",
            "server_url": "https://dice.example.com/mcp",
            "allowed_tools": ["roll"],
        }
    ]
    [request] = stopped.pending_approvals
    assert isinstance(request, ServerToolCall) and request.approval
    assert (request.name, request.server, request.type) == ("roll", "dice", "mcp_approval_request")
    kinds = [p.kind for p in stopped.messages[1].parts]
    assert kinds == ["thinking", "opaque", "server_tool_call"]  # mcp_list_tools kept whole
    done = await agent.run(None, history=stopped.messages, approvals={request.id: True})
    sent = bodies(emu, API)[-1]["input"]
    assert [i.get("type") for i in sent[-3:]] == [
        "mcp_list_tools",
        "mcp_approval_request",
        "mcp_approval_response",
    ]
    assert sent[-1] == {
        "type": "mcp_approval_response",
        "approval_request_id": request.id,
        "approve": True,
    }
    ran = done.messages[-1].server_tool_calls[0]
    assert ran.type == "mcp_call" and ran.data["approval_request_id"] == request.id
    assert "roll answered" in done.output
    assert done.usage.server_tool_uses == {"mcp": 1}


async def test_a_denied_remote_mcp_call_goes_back_refused_with_its_reason(
    emu: Emulator, openai_client: Any
) -> None:
    agent = Agent(model(openai_client), tools=[DICE])
    stopped = await agent.run("Roll the dice for me")
    request_id = stopped.pending_approvals[0].id
    done = await agent.run(
        None, history=stopped.messages, approvals={request_id: ToolDenied("no gambling")}
    )
    assert bodies(emu, API)[-1]["input"][-1] == {
        "type": "mcp_approval_response",
        "approval_request_id": request_id,
        "approve": False,
        "reason": "no gambling",
    }
    assert "did not approve" in done.output
    assert not any(p.type == "mcp_call" for p in done.messages[-1].server_tool_calls)


async def test_a_server_that_never_asks_is_called_at_once(
    emu: Emulator, openai_client: Any
) -> None:
    agent = Agent(
        model(openai_client),
        tools=[MCPServer(url="https://d.example.com", name="dice", require_approval="never")],
    )
    result = await agent.run("Roll the dice for me")
    assert result.pending_approvals == []
    assert bodies(emu, API)[0]["tools"][0]["require_approval"] == "never"
    assert result.messages[1].server_tool_calls[0].type == "mcp_call"


async def test_an_approval_answer_to_no_request_is_refused_by_the_service(
    openai_client: openai.AsyncOpenAI,
) -> None:
    with pytest.raises(openai.BadRequestError, match="mcpr_missing"):
        await openai_client.responses.create(
            model="gpt-5",
            input=[
                {"role": "user", "content": "roll"},
                {
                    "type": "mcp_approval_response",
                    "approval_request_id": "mcpr_missing",
                    "approve": True,
                },
            ],
        )


# --- refusals -------------------------------------------------------------------------------------


def test_tools_and_options_the_responses_api_lacks_are_refused_before_sending(
    emu: Emulator,
) -> None:
    client = emu.openai_client()
    for tool, match in (
        (WebFetch(), "WebFetch is not available on the Responses API"),
        (URLContext(), "URLContext is not available"),
        (WebSearch(max_uses=2), "no 'max_uses'"),
        (WebSearch(blocked_domains=["x.com"]), "no 'blocked_domains'"),
        (MCPServer(url="https://a", name="a", native={}), None),
    ):
        if match is None:
            Agent(model(client), tools=[tool])
            continue
        with pytest.raises(ConfigurationError, match=match):
            Agent(model(client), tools=[tool])
    with pytest.raises(ConfigurationError, match=r"gpt-4\.1-nano"):
        Agent(model(client, "gpt-4.1-nano"), tools=[WebSearch()])
    assert emu.requests == []


async def test_a_model_without_web_search_is_refused_by_the_service_too(
    openai_client: openai.AsyncOpenAI,
) -> None:
    with pytest.raises(openai.BadRequestError) as raised:
        await openai_client.responses.create(
            model="gpt-4.1-nano", input="hi", tools=[{"type": "web_search"}]
        )
    body: Any = raised.value.body
    assert body["message"] == "Hosted tool 'web_search' is not supported with gpt-4.1-nano."
    assert body["param"] == "tools"


async def test_native_fields_reach_the_declaration(emu: Emulator, openai_client: Any) -> None:
    search = WebSearch(
        search_context_size="high", native={"responses": {"external_web_access": False}}
    )
    await Agent(model(openai_client), tools=[search]).run("hello")
    assert bodies(emu, API)[0]["tools"] == [
        {"type": "web_search", "search_context_size": "high", "external_web_access": False}
    ]


async def test_another_scopes_server_items_are_not_sent(emu: Emulator, openai_client: Any) -> None:
    agent = Agent(model(openai_client), tools=[get_weather, WebSearch()])
    first = await agent.run(SEARCH_THEN_WEATHER)
    foreign = [
        m.model_copy(update={"scope": "openai-responses@elsewhere"}) if m.role == "assistant" else m
        for m in first.messages
    ]
    await agent.run("And tomorrow?", history=foreign)
    sent = bodies(emu, API)[-1]
    assert not items(sent, "web_search_call")
    old = first.messages[1].thinking[0].id
    assert old is not None and old not in json.dumps(sent)


def test_an_old_history_with_annotations_in_details_still_replays_them(emu: Emulator) -> None:
    annotation = {
        "type": "url_citation",
        "url": "https://a.example",
        "title": "A",
        "start_index": 0,
        "end_index": 1,
    }
    old = Message(
        role="assistant",
        parts=(
            TextPart(text="A", provider_details={"item_id": "msg_1", "annotations": [annotation]}),
        ),
        scope="openai-responses@localhost",
        model="gpt-5",
    )
    sent = model(emu.openai_client()).build_messages([Message.user("q"), old])
    assert sent[1]["content"][0]["annotations"] == [annotation]


def test_a_request_with_built_in_tools_to_chat_completions_is_refused(emu: Emulator) -> None:
    from thinkagent import ModelRequest
    from thinkagent.providers.openai import OpenAIChatModel

    chat = OpenAIChatModel("gpt-5", client=emu.openai_client())
    with pytest.raises(ConfigurationError, match="not available on OpenAIChatModel"):
        Agent(chat, tools=[WebSearch()])
    request = ModelRequest(messages=[Message.user("hi")], builtin_tools=[WebSearch()])
    with pytest.raises(ConfigurationError, match="use OpenAIResponsesModel"):
        chat.build_request(request)


RECORDED_SHAPE: dict[str, Any] = {
    "id": "resp_1",
    "object": "response",
    "created_at": 1,
    "model": "gpt-5",
    "status": "completed",
    "parallel_tool_calls": True,
    "tool_choice": "auto",
    "tools": [],
    "output": [
        {
            "id": "rs_1",
            "type": "reasoning",
            "summary": [],
            "encrypted_content": "gAAAAAB-sealed",
        },
        {
            "id": "ws_1",
            "type": "web_search_call",
            "status": "completed",
            "action": {
                "type": "search",
                "query": "lyon news",
                "sources": [{"type": "url", "url": "https://lyon.example/a"}],
            },
        },
        {
            "id": "ts_1",
            "type": "tool_search_call",
            "call_id": "tsc_1",
            "execution": "server",
            "status": "completed",
            "arguments": {"query": "weather"},
        },
        {
            "id": "tso_1",
            "type": "tool_search_output",
            "call_id": "tsc_1",
            "execution": "server",
            "status": "completed",
            "tools": [],
        },
        {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "status": "completed",
            "content": [
                {
                    "type": "output_text",
                    "text": "Lyon is calm.",
                    "annotations": [
                        {
                            "type": "url_citation",
                            "start_index": 0,
                            "end_index": 4,
                            "url": "https://lyon.example/a",
                            "title": "A",
                        }
                    ],
                }
            ],
        },
    ],
}
"""A response in the shapes of the SDK's types for a searched answer (web search, tool
search, a cited message)."""


def test_a_recorded_shape_parses_and_replays_item_for_item(emu: Emulator) -> None:
    from openai.types.responses import Response

    responses = model(emu.openai_client())
    message = responses.parse_response(Response.model_validate(RECORDED_SHAPE)).message
    assert [p.kind for p in message.parts] == [
        "thinking",
        "server_tool_call",
        "server_tool_result",
        "server_tool_call",
        "server_tool_result",
        "text",
    ]
    assert message.citations[0].url == "https://lyon.example/a"
    assert message.usage is not None and message.usage.server_tool_uses == {
        "web_search": 1,
        "tool_search": 1,
    }
    sent = responses.build_messages([Message.user("news?"), message])
    assert sent[1:5] == RECORDED_SHAPE["output"][:4]
    assert (
        sent[5]["content"][0]["annotations"]
        == RECORDED_SHAPE["output"][4]["content"][0]["annotations"]
    )
