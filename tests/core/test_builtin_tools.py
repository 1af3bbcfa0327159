"""Built-in tools without a provider: the config types, the parts their calls and results
become (validation, JSON, the replay policy), the stream of whole parts, and the agent's
handling of them (declared with the function tools, refused where the model takes none,
approvals of the calls a provider waits on)."""

from __future__ import annotations

import pytest
from pydantic import JsonValue

from thinkagent import (
    Agent,
    Citation,
    CodeExecution,
    ConfigurationError,
    FileSearch,
    HistoryError,
    MCPServer,
    Message,
    ModelRequest,
    OpaqueBlock,
    PartEnd,
    ServerToolCall,
    ServerToolResult,
    StreamBuilder,
    TextPart,
    ThinkingBlock,
    ToolCall,
    ToolDenied,
    ToolResult,
    ToolSearch,
    Usage,
    UserLocation,
    WebFetch,
    WebSearch,
    dump_messages,
    load_messages,
    repair,
    validate_history,
)
from thinkagent.history import for_scope
from thinkagent.testing import ScriptedModel

SEARCH_DATA: dict[str, JsonValue] = {
    "type": "server_tool_use",
    "id": "srvtoolu_1",
    "name": "web_search",
    "input": {"query": "paris news"},
}
RESULT_DATA: dict[str, JsonValue] = {
    "type": "web_search_tool_result",
    "tool_use_id": "srvtoolu_1",
    "content": [
        {
            "type": "web_search_result",
            "url": "https://news.example.com/paris/1",
            "title": "Paris: result 1",
            "encrypted_content": "EqgfCioIARgBIiQ3YTAwMjY1Mi1mZjM5LTQ1NGUtODgxNC1kNjNjNTk1ZWI3Y==",
        }
    ],
}


def search_call() -> ServerToolCall:
    return ServerToolCall(
        id="srvtoolu_1",
        name="web_search",
        builtin="web_search",
        arguments={"query": "paris news"},
        type="server_tool_use",
        data=SEARCH_DATA,
    )


def search_result() -> ServerToolResult:
    return ServerToolResult(
        call_id="srvtoolu_1",
        name="web_search",
        builtin="web_search",
        content=[{"url": "https://news.example.com/paris/1", "title": "Paris: result 1"}],
        type="web_search_tool_result",
        data=RESULT_DATA,
    )


def cited_text() -> TextPart:
    citation = Citation(
        type="web_search_result_location",
        url="https://news.example.com/paris/1",
        title="Paris: result 1",
        cited_text="Paris is sunny",
        data={"type": "web_search_result_location", "encrypted_index": "Eo8BCioIAhgB"},
    )
    return TextPart(text="Paris is sunny.", citations=(citation,))


def approval_request() -> ServerToolCall:
    return ServerToolCall(
        id="mcpr_1",
        name="roll",
        builtin="mcp",
        arguments='{"dice": "2d6"}',
        server="dice",
        approval=True,
        type="mcp_approval_request",
        data={"type": "mcp_approval_request", "id": "mcpr_1", "name": "roll"},
    )


def searched(scope: str = "anthropic") -> list[Message]:
    return [
        Message.user("Search the news in Paris"),
        Message(
            role="assistant",
            parts=(
                ThinkingBlock.signed("I will search.", "sig-1"),
                search_call(),
                search_result(),
                cited_text(),
            ),
            scope=scope,
            model="m",
        ),
        Message.user("And tomorrow?"),
    ]


# --- the config types -------------------------------------------------------------------------


def test_configs_validate_their_options() -> None:
    with pytest.raises(ConfigurationError, match="not both"):
        WebSearch(allowed_domains=["a.com"], blocked_domains=["b.com"])
    with pytest.raises(ConfigurationError, match="max_uses"):
        WebSearch(max_uses=0)
    with pytest.raises(ConfigurationError, match="not one string"):
        WebSearch(allowed_domains="a.com")  # pyright: ignore[reportArgumentType]
    with pytest.raises(ConfigurationError, match="vector_store_ids"):
        FileSearch()
    with pytest.raises(ConfigurationError, match="http"):
        MCPServer(url="ftp://x", name="x")
    with pytest.raises(ConfigurationError, match="no wire"):
        WebSearch(native={"bedrock": {}})
    with pytest.raises(ConfigurationError, match="'always' or 'never'"):
        MCPServer(url="https://x", name="x", require_approval="sometimes")  # pyright: ignore[reportArgumentType]


def test_options_lists_what_was_set_and_the_secrets_stay_out_of_the_repr() -> None:
    search = WebSearch(max_uses=3, user_location=UserLocation(city="Paris", country="FR"))
    assert search.options() == ["max_uses", "user_location"]
    assert search.user_location is not None
    assert search.user_location.to_dict() == {"city": "Paris", "country": "FR"}
    server = MCPServer(url="https://dice.example.com/mcp", name="dice", authorization="tok-secret")
    assert server.options() == ["authorization"]
    assert "tok-secret" not in repr(server)
    assert server.label == "MCPServer(name='dice')"
    assert WebFetch().options() == [] and CodeExecution().kind == "code_execution"


def test_native_fields_are_kept_per_wire_and_frozen() -> None:
    search = WebSearch(native={"anthropic": {"type": "web_search_20260209"}})
    assert search.native_for("anthropic") == {"type": "web_search_20260209"}
    assert search.native_for("gemini") == {}
    with pytest.raises(TypeError):
        search.native["responses"] = {}  # type: ignore[index]


# --- the agent ----------------------------------------------------------------------------------


def test_the_agent_takes_built_in_tools_in_its_tools_and_sends_them() -> None:
    def lookup(q: str) -> str:
        """Look something up."""
        return q

    model = ScriptedModel([Message(role="assistant", parts=(TextPart(text="done"),))])
    search = WebSearch()
    agent = Agent(model, tools=[lookup, search])
    assert list(agent.tools) == ["lookup"]
    assert agent.builtin_tools == (search,)
    agent.run_sync("hi")
    assert model.requests[0].builtin_tools == (search,)
    assert [t.name for t in model.requests[0].tools] == ["lookup"]


class _NoBuiltins(ScriptedModel):
    check_builtin_tools = None  # type: ignore[assignment]  # a model that declares none


def test_a_model_without_built_in_tools_refuses_them_when_the_agent_is_made() -> None:
    model = _NoBuiltins([])
    with pytest.raises(ConfigurationError, match="WebSearch is not available on _NoBuiltins"):
        Agent(model, tools=[WebSearch()])
    assert model.requests == []


def test_a_config_class_instead_of_an_instance_is_named() -> None:
    with pytest.raises(ConfigurationError, match=r"WebSearch\(\)"):
        Agent(ScriptedModel([]), tools=[WebSearch])  # pyright: ignore[reportArgumentType]


def test_the_same_built_in_tool_twice_is_refused_but_two_mcp_servers_are_not() -> None:
    with pytest.raises(ConfigurationError, match="given twice"):
        Agent(ScriptedModel([]), tools=[WebSearch(), WebSearch(max_uses=2)])
    Agent(
        ScriptedModel([]),
        tools=[MCPServer(url="https://a", name="a"), MCPServer(url="https://b", name="b")],
    )
    with pytest.raises(ConfigurationError, match="given twice"):
        Agent(
            ScriptedModel([]),
            tools=[MCPServer(url="https://a", name="a"), MCPServer(url="https://b", name="a")],
        )


def test_tool_search_must_defer_tools_the_agent_has() -> None:
    with pytest.raises(ConfigurationError, match="'missing'"):
        Agent(ScriptedModel([]), tools=[ToolSearch(deferred=["missing"])])


# --- the parts ------------------------------------------------------------------------------------


def test_server_parts_and_citations_survive_json_byte_for_byte() -> None:
    history = searched()
    loaded = load_messages(dump_messages(history))
    assert loaded == history
    assert loaded[1].server_tool_calls[0].data == SEARCH_DATA
    assert loaded[1].server_tool_results[0].data == RESULT_DATA
    assert loaded[1].citations[0].data["encrypted_index"] == "Eo8BCioIAhgB"
    assert '"citations"' not in dump_messages([Message.user("plain")])


def test_server_parts_on_a_user_message_are_refused() -> None:
    bad = [Message(role="user", parts=(search_result(),))]
    with pytest.raises(HistoryError, match=r"messages\[0\].parts\[0\].*web_search_tool_result"):
        validate_history(bad)


def test_an_approval_request_must_be_answered_in_the_next_user_turn() -> None:
    asked = Message(role="assistant", parts=(approval_request(),), scope="s", model="m")
    validate_history([Message.user("roll"), asked])  # still pending at the end: fine
    with pytest.raises(HistoryError, match="'mcpr_1' has no result"):
        validate_history([Message.user("roll"), asked, Message.user("and?")])
    answer = ToolResult(call_id="mcpr_1", name="roll", content="approved")
    validate_history([Message.user("roll"), asked, Message.user_results([answer])])


def test_repair_denies_an_approval_request_left_unanswered() -> None:
    asked = Message(role="assistant", parts=(approval_request(),), scope="s", model="m")
    repaired = repair([Message.user("roll"), asked, Message.user("and?")])
    result = repaired[2].tool_results[0]
    assert (result.call_id, result.is_error) == ("mcpr_1", True)
    validate_history(repaired)


def test_for_scope_keeps_server_parts_and_citations_for_their_own_scope_only() -> None:
    history = searched("anthropic")
    assert for_scope(history, "anthropic") == history
    for foreign in (
        for_scope(history, "gemini"),
        for_scope(history, "bedrock", compatible=["anthropic"]),
    ):
        parts = foreign[1].parts
        assert not any(isinstance(p, ServerToolCall | ServerToolResult) for p in parts)
        text = next(p for p in parts if isinstance(p, TextPart))
        assert text.text == "Paris is sunny." and text.citations == ()


def test_for_scope_under_the_text_policy_still_drops_server_parts() -> None:
    history = searched("anthropic")
    kept = for_scope(history, "openai-responses", foreign_reasoning="text")[1].parts
    assert [p.kind for p in kept] == ["text", "text"]


def test_for_scope_drops_the_answer_to_a_foreign_approval_request() -> None:
    asked = Message(
        role="assistant",
        parts=(TextPart(text="May I roll?"), approval_request()),
        scope="openai-responses",
        model="m",
    )
    answer = Message.user_results([ToolResult(call_id="mcpr_1", name="roll", content="ok")])
    history = [Message.user("roll"), asked, answer, Message.user("so?")]
    own = for_scope(history, "openai-responses")
    assert own == history
    foreign = for_scope(history, "anthropic")
    assert [m.role for m in foreign] == ["user", "assistant", "user"]
    assert foreign[1].parts == (TextPart(text="May I roll?"),)


def test_usage_adds_server_tool_uses_and_leaves_them_out_of_json_when_none() -> None:
    a = Usage(input_tokens=1, server_tool_uses={"web_search": 2})
    b = Usage(output_tokens=1, server_tool_uses={"web_search": 1, "code_execution": 1})
    assert (a + b).server_tool_uses == {"web_search": 3, "code_execution": 1}
    assert (a + Usage()).server_tool_uses == {"web_search": 2}
    assert "server_tool_uses" not in Usage(input_tokens=3).model_dump_json(exclude_none=True)


# --- streams --------------------------------------------------------------------------------------


def test_stream_builder_keeps_provider_blocks_whole_and_cuts_them_when_unfinished() -> None:
    builder = StreamBuilder(json_arguments=True)
    builder.thinking(0, "hm")
    end = builder.whole(1, search_call())
    assert end == PartEnd(1, search_call())
    builder.block(2, {"type": "x", "partial": True}, ServerToolResult, _result_of)
    assert builder.partial(scope="s", model="m").parts[1:] == (search_call(),)  # 2 never ended
    end = builder.end(2)
    assert end is not None and isinstance(end.part, ServerToolResult)
    message = builder.message(scope="s", model="m")
    assert [p.kind for p in message.parts] == ["thinking", "server_tool_call", "server_tool_result"]


def _result_of(data: dict[str, JsonValue]) -> ServerToolResult:
    return ServerToolResult(call_id="c", name="n", type=str(data["type"]), data=dict(data))


async def test_a_scripted_stream_yields_provider_blocks_as_part_ends_in_place() -> None:
    message = searched()[1]
    opaque = OpaqueBlock.of({"type": "mcp_list_tools", "tools": []})
    message = message.model_copy(update={"parts": (*message.parts[:1], opaque, *message.parts[1:])})
    model = ScriptedModel([message])
    events = [event async for event in model.stream(ModelRequest(messages=[Message.user("x")]))]
    ends = [e.index for e in events if isinstance(e, PartEnd)]
    assert ends == [0, 1, 2, 3, 4]
    final = events[-1]
    assert final.message.parts == message.parts  # type: ignore[union-attr]


# --- approvals --------------------------------------------------------------------------------


def _asking() -> Message:
    return Message(role="assistant", parts=(approval_request(),))


async def test_a_provider_approval_request_stops_the_run_and_is_approved_through_the_flow() -> None:
    model = ScriptedModel([_asking(), Message(role="assistant", parts=(TextPart(text="7"),))])
    agent = Agent(model, tools=[MCPServer(url="https://dice.example.com/mcp", name="dice")])
    stopped = await agent.run("roll 2d6")
    assert stopped.pending_approvals == [approval_request()]
    assert len(model.requests) == 1
    done = await agent.run(None, history=stopped.messages, approvals={"mcpr_1": True})
    assert done.output == "7"
    answer = done.messages[2].tool_results[0]
    assert (answer.call_id, answer.is_error) == ("mcpr_1", False)
    assert model.requests[1].messages[-1] == done.messages[2]


async def test_a_denied_provider_approval_request_goes_back_with_its_reason() -> None:
    model = ScriptedModel([_asking(), Message(role="assistant", parts=(TextPart(text="ok"),))])
    agent = Agent(model, tools=[MCPServer(url="https://dice.example.com/mcp", name="dice")])
    stopped = await agent.run("roll 2d6")
    done = await agent.run(
        None, history=stopped.messages, approvals={"mcpr_1": ToolDenied("not today")}
    )
    answer = done.messages[2].tool_results[0]
    assert (answer.content, answer.is_error) == ("not today", True)


async def test_an_approval_request_beside_a_tool_call_waits_for_both() -> None:
    ran: list[str] = []

    def lookup(q: str) -> str:
        """Look something up."""
        ran.append(q)
        return q

    both = Message(
        role="assistant",
        parts=(ToolCall(id="c1", name="lookup", arguments={"q": "x"}), approval_request()),
    )
    model = ScriptedModel([both, Message(role="assistant", parts=(TextPart(text="ok"),))])
    agent = Agent(model, tools=[lookup, MCPServer(url="https://d.example.com", name="dice")])
    stopped = await agent.run("go")
    assert [c.id for c in stopped.pending_approvals] == ["mcpr_1"] and ran == []
    done = await agent.run(None, history=stopped.messages, approvals={"mcpr_1": True})
    assert ran == ["x"]
    assert [r.call_id for r in done.messages[2].tool_results] == ["c1", "mcpr_1"]


async def test_a_built_in_tools_call_cannot_be_approved_with_other_arguments() -> None:
    from thinkagent import ApprovalError, ToolApproved

    model = ScriptedModel([_asking(), Message(role="assistant", parts=(TextPart(text="7"),))])
    agent = Agent(model, tools=[MCPServer(url="https://dice.example.com/mcp", name="dice")])
    stopped = await agent.run("roll 2d6")
    edited = {"mcpr_1": ToolApproved(arguments={"dice": "1d6"})}
    with pytest.raises(ApprovalError, match="cannot be changed"):
        await agent.run(None, history=stopped.messages, approvals=edited)
    done = await agent.run(None, history=stopped.messages, approvals={"mcpr_1": ToolApproved()})
    assert done.output == "7" and not done.messages[2].tool_results[0].is_error


async def test_a_run_on_another_model_must_take_the_built_in_tools() -> None:
    agent = Agent(ScriptedModel([]), tools=[WebSearch()])
    with pytest.raises(ConfigurationError, match="WebSearch is not available on _NoBuiltins"):
        await agent.run("hi", model=_NoBuiltins([]))
