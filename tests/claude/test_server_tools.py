"""Claude's server tools through the official `anthropic` SDK against the emulator: declared
from the configs, their blocks as parts in place and back byte for byte (a preserved-thinking
model's prefix check included), cited text sent back whole, sealed search results and
citations refused when altered, the MCP connector, and what is refused before sending."""

from __future__ import annotations

from typing import Any

import anthropic
import pytest

from thinkagent import (
    Agent,
    BuiltinTool,
    CodeExecution,
    ConfigurationError,
    FileSearch,
    ImageGeneration,
    MCPServer,
    Message,
    OpaqueBlock,
    ProviderError,
    ServerToolCall,
    ServerToolResult,
    TextPart,
    ThinkingBlock,
    ToolCall,
    ToolSearch,
    URLContext,
    WebFetch,
    WebSearch,
    dump_messages,
    load_messages,
)
from thinkagent.emulator import Emulator
from thinkagent.providers.claude import AnthropicModel, BedrockModel, ClaudeThinking

SEARCH_THEN_WEATHER = "Search the web for today's news in Paris, then tell me the weather there."
SEARCH_ONLY = "Search the web for the latest news about Lyon"


def get_weather(city: str) -> str:
    """Current weather for a city."""
    return f"sunny in {city}, 21 C"


def claude(client: Any, name: str = "claude-sonnet-4-6") -> AnthropicModel:
    return AnthropicModel(name, client=client, thinking=ClaudeThinking.adaptive())


def bodies(emu: Emulator) -> list[dict[str, Any]]:
    return [r.body for r in emu.requests if r.api == "anthropic" and isinstance(r.body, dict)]


def assistant_blocks(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [b for m in body["messages"] if m["role"] == "assistant" for b in m["content"]]


async def test_web_search_in_a_thinking_tool_loop_goes_back_byte_for_byte(
    emu: Emulator, anthropic_client: Any
) -> None:
    agent = Agent(claude(anthropic_client), tools=[get_weather, WebSearch(max_uses=3)])
    result = await agent.run(SEARCH_THEN_WEATHER)
    first, second = bodies(emu)
    assert {"type": "web_search_20250305", "name": "web_search", "max_uses": 3} in first["tools"]
    turn = result.messages[1]
    assert [type(p) for p in turn.parts] == [
        ThinkingBlock,
        ServerToolCall,
        ServerToolResult,
        TextPart,
        ToolCall,
    ]
    call, found = turn.server_tool_calls[0], turn.server_tool_results[0]
    assert (call.name, call.builtin, call.type) == ("web_search", "web_search", "server_tool_use")
    assert call.id.startswith("srvtoolu_") and found.call_id == call.id
    assert isinstance(found.content, list) and "encrypted_content" not in found.content[0]  # type: ignore[operator]
    sent = assistant_blocks(second)
    assert sent[1] == call.data and sent[2] == found.data
    assert "encrypted_content" in found.data["content"][0]  # type: ignore[index]
    assert turn.usage is not None and turn.usage.server_tool_uses == {"web_search": 1}


async def test_the_stream_equals_the_response(emu: Emulator, anthropic_client: Any) -> None:
    agent = Agent(claude(anthropic_client), tools=[get_weather, WebSearch()])
    expected = await agent.run(SEARCH_THEN_WEATHER)
    async with agent.run_stream(SEARCH_THEN_WEATHER) as stream:
        async for _ in stream:
            pass
    assert stream.result.messages == expected.messages


async def test_a_preserved_thinking_model_accepts_the_replayed_server_blocks(
    emu: Emulator, anthropic_client: Any
) -> None:
    agent = Agent(claude(anthropic_client, "claude-opus-5-5"), tools=[get_weather, WebSearch()])
    first = await agent.run(SEARCH_THEN_WEATHER)
    history = load_messages(dump_messages(first.messages))
    second = await agent.run("And tomorrow?", history=history)
    assert second.warnings == []
    assert assistant_blocks(bodies(emu)[-1])[1] == first.messages[1].server_tool_calls[0].data


async def test_search_results_cite_their_pages_and_the_citations_go_back_whole(
    emu: Emulator, anthropic_client: Any
) -> None:
    agent = Agent(claude(anthropic_client), tools=[WebSearch()])
    result = await agent.run(SEARCH_ONLY)
    cited = [p for p in result.messages[1].parts if isinstance(p, TextPart) and p.citations]
    assert cited
    citation = cited[0].citations[0]
    assert citation.type == "web_search_result_location" and citation.url
    assert "encrypted_index" in citation.data
    async with agent.run_stream(SEARCH_ONLY) as stream:
        async for _ in stream:
            pass
    assert stream.result.messages == result.messages
    await agent.run("Thanks", history=result.messages)
    texts = [b for b in assistant_blocks(bodies(emu)[-1]) if b["type"] == "text"]
    assert any(b.get("citations") == [dict(c.data) for c in cited[0].citations] for b in texts)


def _forge(result_messages: list[Message], change: Any) -> list[Message]:
    turn = result_messages[1]
    parts = tuple(change(p) for p in turn.parts)
    return [result_messages[0], turn.model_copy(update={"parts": parts}), *result_messages[2:]]


async def test_altered_encrypted_search_results_are_refused(
    emu: Emulator, anthropic_client: Any
) -> None:
    agent = Agent(claude(anthropic_client), tools=[WebSearch()])
    result = await agent.run(SEARCH_ONLY)

    def alter(part: Any) -> Any:
        if not isinstance(part, ServerToolResult) or part.data is None:
            return part
        data = dict(part.data)
        pages = [dict(p) for p in data["content"]]  # type: ignore[union-attr]
        pages[0]["encrypted_content"] = "A" + str(pages[0]["encrypted_content"])[1:]
        data["content"] = pages  # type: ignore[assignment]
        return part.model_copy(update={"data": data})

    with pytest.raises(ProviderError, match="encrypted_content") as raised:
        await agent.run("Thanks", history=_forge(result.messages, alter))
    assert raised.value.status == 400


async def test_an_altered_citation_is_refused(emu: Emulator, anthropic_client: Any) -> None:
    agent = Agent(claude(anthropic_client), tools=[WebSearch()])
    result = await agent.run(SEARCH_ONLY)

    def alter(part: Any) -> Any:
        if not isinstance(part, TextPart) or not part.citations:
            return part
        first = part.citations[0]
        data = {**first.data, "encrypted_index": "A" + str(first.data["encrypted_index"])[1:]}
        return part.model_copy(
            update={"citations": (first.model_copy(update={"data": data}), *part.citations[1:])}
        )

    with pytest.raises(ProviderError, match="encrypted_index"):
        await agent.run("Thanks", history=_forge(result.messages, alter))


async def test_a_search_call_sent_back_without_its_result_is_refused(
    emu: Emulator, anthropic_client: Any
) -> None:
    agent = Agent(claude(anthropic_client), tools=[WebSearch()])
    result = await agent.run(SEARCH_ONLY)
    turn = result.messages[1]
    parts = tuple(p for p in turn.parts if not isinstance(p, ServerToolResult))
    history = [result.messages[0], turn.model_copy(update={"parts": parts})]
    with pytest.raises(ProviderError, match="ids were found without `tool_result` blocks"):
        await agent.run("Thanks", history=history)


async def test_code_execution_runs_as_bash_with_its_stdout(
    emu: Emulator, anthropic_client: Any
) -> None:
    agent = Agent(claude(anthropic_client), tools=[CodeExecution()])
    result = await agent.run("Calculate 2 + 3 with code")
    call = result.messages[1].server_tool_calls[0]
    output = result.messages[1].server_tool_results[0]
    assert (call.name, call.builtin) == ("bash_code_execution", "code_execution")
    assert output.content == {"stdout": "5\n", "stderr": "", "return_code": 0, "content": []}
    assert not output.is_error and output.name == "bash_code_execution"
    assert result.usage.server_tool_uses == {"code_execution": 1}


async def test_the_mcp_connector_declares_the_server_and_keeps_its_blocks(
    emu: Emulator, anthropic_client: Any
) -> None:
    dice = MCPServer(
        url="https://dice.example.com/mcp", name="dice", allowed_tools=["roll"], authorization="tok"
    )
    agent = Agent(claude(anthropic_client), tools=[dice])
    result = await agent.run("Roll the dice for me")
    request = emu.requests[-1]
    assert "mcp-client-2025-11-20" in request.headers["anthropic-beta"]
    assert request.body["mcp_servers"] == [
        {
            "type": "url",
            "url": "https://dice.example.com/mcp",
            "name": "dice",
            "authorization_token": "tok",
        }
    ]
    assert request.body["tools"] == [
        {
            "type": "mcp_toolset",
            "mcp_server_name": "dice",
            "default_config": {"enabled": False},
            "configs": {"roll": {"enabled": True}},
        }
    ]
    call, answer = (
        result.messages[1].server_tool_calls[0],
        result.messages[1].server_tool_results[0],
    )
    assert (call.type, call.server, call.name, call.builtin) == (
        "mcp_tool_use",
        "dice",
        "roll",
        "mcp",
    )
    assert answer.content == [{"type": "text", "text": "roll answered 'Roll the dice for me'"}]


async def test_tool_search_defers_the_tools_it_names(emu: Emulator, anthropic_client: Any) -> None:
    agent = Agent(
        claude(anthropic_client),
        tools=[get_weather, ToolSearch(deferred=["get_weather"], mode="bm25")],
    )
    await agent.run("hello")
    tools = bodies(emu)[0]["tools"]
    assert tools[0]["name"] == "get_weather" and tools[0]["defer_loading"] is True
    assert "cache_control" not in tools[0]
    assert tools[1] == {"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"}


@pytest.mark.parametrize(
    ("tool", "match"),
    [
        (FileSearch(vector_store_ids=["vs_1"]), "FileSearch is not available on Claude"),
        (ImageGeneration(), "ImageGeneration is not available on Claude"),
        (URLContext(), r"use WebFetch"),
        (WebSearch(search_context_size="high"), "no 'search_context_size'"),
        (MCPServer(url="https://a", name="a", require_approval="always"), "no approvals"),
        (MCPServer(url="https://a", name="a", headers={"x": "y"}), "no 'headers'"),
    ],
)
def test_what_claude_lacks_is_refused_before_sending(
    emu: Emulator, tool: BuiltinTool, match: str
) -> None:
    with pytest.raises(ConfigurationError, match=match):
        Agent(claude(emu.anthropic_client()), tools=[tool])
    assert emu.requests == []


def test_an_old_model_and_bedrock_converse_refuse_server_tools(emu: Emulator) -> None:
    with pytest.raises(ConfigurationError, match="WebFetch is not available on claude-3-haiku"):
        old = AnthropicModel("claude-3-haiku-20240307", client=emu.anthropic_client())
        Agent(old, tools=[WebFetch()])
    bedrock = BedrockModel("anthropic.claude-sonnet-4-5-20250929-v1:0", client=emu.bedrock_client())
    with pytest.raises(ConfigurationError, match="not available on BedrockModel"):
        Agent(bedrock, tools=[WebSearch()])
    assert emu.requests == []


async def test_a_function_tool_named_like_a_server_tool_is_refused(
    emu: Emulator, anthropic_client: Any
) -> None:
    def web_search(query: str) -> str:
        """Search."""
        return query

    agent = Agent(claude(anthropic_client), tools=[web_search, WebSearch()])
    with pytest.raises(ConfigurationError, match="'web_search'"):
        await agent.run("hello")
    assert emu.requests == []


async def test_an_old_model_refuses_search_at_the_service(
    anthropic_client: anthropic.AsyncAnthropic,
) -> None:
    with pytest.raises(anthropic.BadRequestError, match="web_search_20250305"):
        await anthropic_client.messages.create(
            model="claude-3-haiku-20240307",
            max_tokens=100,
            messages=[{"role": "user", "content": "hi"}],
            tools=[{"type": "web_search_20250305", "name": "web_search"}],
        )


def test_server_blocks_kept_as_opaque_blocks_by_older_versions_still_go_back(emu: Emulator) -> None:
    use = {
        "type": "server_tool_use",
        "id": "srvtoolu_1",
        "name": "web_search",
        "input": {"query": "q"},
    }
    found = {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": []}
    old = Message(
        role="assistant",
        parts=(OpaqueBlock.of(use), OpaqueBlock.of(found), TextPart(text="none found")),
        scope="anthropic@localhost",
        model="claude-sonnet-4-6",
    )
    sent = claude(emu.anthropic_client()).build_messages(
        [Message.user("q"), old, Message.user("ok")]
    )
    assert sent[1]["content"][:2] == [use, found]


def test_a_request_with_built_in_tools_to_converse_is_refused_before_sending(emu: Emulator) -> None:
    from thinkagent import ModelRequest

    bedrock = BedrockModel("anthropic.claude-sonnet-4-5-20250929-v1:0", client=emu.bedrock_client())
    request = ModelRequest(messages=[Message.user("hi")], builtin_tools=[WebSearch()])
    with pytest.raises(ConfigurationError, match="WebSearch is not available on Bedrock Converse"):
        bedrock.build_request(request)


async def test_a_turn_paused_in_a_search_loop_is_continued_with_its_blocks(
    emu: Emulator, anthropic_client: Any
) -> None:
    from thinkagent.emulator.model import Reply, SearchHit, ServerUse

    hit = SearchHit("https://news.example.com/lyon/1", "Lyon: result 1", "Lyon is calm.")
    search = ServerUse("web_search", "web_search", {"query": "lyon"}, hits=(hit,))
    emu.script(
        "anthropic",
        [Reply(thinking="Searching first.", server_uses=[search], stop_reason="pause_turn")],
    )
    agent = Agent(claude(anthropic_client), tools=[WebSearch()])
    result = await agent.run(SEARCH_ONLY)
    paused = result.messages[1]
    assert paused.finish_reason == "pause_turn"
    assert [p.kind for p in paused.parts] == ["thinking", "server_tool_call", "server_tool_result"]
    _, second = bodies(emu)
    assert second["messages"][-1]["role"] == "assistant"
    assert second["messages"][-1]["content"][1:] == [
        paused.server_tool_calls[0].data,
        paused.server_tool_results[0].data,
    ]
    assert result.messages[-1].finish_reason == "stop" and result.output
