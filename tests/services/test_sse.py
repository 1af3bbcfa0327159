"""A streamed run as Server-Sent Events: thinkagent's event schema and the Vercel AI SDK's UI
message stream chunks, part starts and ends included, redacted blocks marked, no proof."""

from __future__ import annotations

import json
from typing import Any

from thinkagent import (
    Agent,
    Message,
    ProviderError,
    TextPart,
    ThinkingBlock,
    ToolCall,
    ToolDenied,
    WarningEvent,
)
from thinkagent.sse import sse_events, ui_message_chunks
from thinkagent.testing import ScriptedModel, ScriptedResponse

SIGNATURE = "c2lnbmF0dXJlLW9mLXRoZS10aGlua2luZy1ibG9jaw=="
REDACTED = "cmVkYWN0ZWQtcGF5bG9hZC1vZi10aGUtc2VydmljZQ=="
CALLS = Message(
    role="assistant",
    parts=(
        ThinkingBlock.signed("Weather first.", SIGNATURE),
        ThinkingBlock.redacted_payload(REDACTED),
        TextPart(text="Looking."),
        ToolCall(id="c1", name="get_weather", arguments={"city": "Paris"}),
    ),
)
ANSWER = Message(role="assistant", parts=(TextPart(text="Sunny."),))


def get_weather(city: str) -> str:
    """Current weather for a city."""
    return f"sunny in {city}"


def agent(*script: Any) -> Agent[None, str]:
    return Agent(ScriptedModel(script, chunk_size=6), tools=[get_weather])


async def test_thinkagent_events_open_and_close_every_part() -> None:
    stream = agent(CALLS, ANSWER).run_stream("Weather?")
    events = [(e["event"], json.loads(e["data"])) async for e in sse_events(stream)]
    names = [name for name, _ in events]
    assert names[0] == "step-start" and names[-1] == "done"
    starts = [data for name, data in events if name == "part-start"]
    assert starts[:4] == [
        {"step": 1, "index": 0, "kind": "thinking"},
        {"step": 1, "index": 1, "kind": "thinking", "redacted": True},
        {"step": 1, "index": 2, "kind": "text"},
        {"step": 1, "index": 3, "kind": "tool_call", "id": "c1", "name": "get_weather"},
    ]
    ends = [data for name, data in events if name == "part-end"]
    assert ends[:4] == [
        {"step": 1, "index": 0, "kind": "thinking", "redacted": False, "signed": True},
        {"step": 1, "index": 1, "kind": "thinking", "redacted": True, "signed": False},
        {"step": 1, "index": 2, "kind": "text"},
        {
            "step": 1,
            "index": 3,
            "kind": "tool_call",
            "id": "c1",
            "name": "get_weather",
            "arguments": {"city": "Paris"},
        },
    ]
    thinking = "".join(d["text"] for n, d in events if n == "thinking" and d["step"] == 1)
    assert thinking == "Weather first."
    arguments = "".join(d["arguments"] for n, d in events if n == "tool-call")
    assert json.loads(arguments) == {"city": "Paris"}
    # every part ends before its step does, and after its last delta
    for name, data in events:
        if name in ("thinking", "text", "tool-call"):
            assert events.index((name, data)) < events.index(
                (
                    "part-end",
                    next(
                        e for e in ends if e["step"] == data["step"] and e["index"] == data["index"]
                    ),
                )
            )
    assert (
        "tool-result",
        {"call_id": "c1", "name": "get_weather", "content": "sunny in Paris", "is_error": False},
    ) in events
    steps = [data for name, data in events if name == "step"]
    assert [s["finish_reason"] for s in steps] == [None, None]
    assert names.count("step-start") == 2 and names.count("usage") == 2
    done = events[-1][1]
    assert done["output"] == "Sunny." and done["usage"]["requests"] == 2
    text = json.dumps(events)
    assert SIGNATURE not in text and REDACTED not in text


async def test_ui_message_chunks_follow_the_ai_sdk_protocol() -> None:
    stream = agent(CALLS, ANSWER).run_stream("Weather?")
    chunks = [c async for c in ui_message_chunks(stream, message_id="m1")]
    types = [c["type"] for c in chunks]
    assert chunks[0] == {"type": "start", "messageId": "m1"}
    assert types[1] == "start-step" and types.count("start-step") == types.count("finish-step") == 2
    assert chunks[-1]["type"] == "finish"
    assert chunks[-1]["messageMetadata"]["usage"]["requests"] == 2
    assert {"type": "reasoning-start", "id": "1-0"} in chunks
    assert {
        "type": "reasoning-start",
        "id": "1-1",
        "providerMetadata": {"thinkagent": {"redacted": True}},
    } in chunks
    assert (
        "".join(c["delta"] for c in chunks if c["type"] == "reasoning-delta" and c["id"] == "1-0")
        == "Weather first."
    )
    assert not [c for c in chunks if c["type"] == "reasoning-delta" and c["id"] == "1-1"]
    assert {"type": "reasoning-end", "id": "1-1"} in chunks
    assert {"type": "tool-input-start", "toolCallId": "c1", "toolName": "get_weather"} in chunks
    assert {
        "type": "tool-input-available",
        "toolCallId": "c1",
        "toolName": "get_weather",
        "input": {"city": "Paris"},
    } in chunks
    assert {
        "type": "tool-output-available",
        "toolCallId": "c1",
        "output": "sunny in Paris",
    } in chunks
    assert (
        types.index("tool-input-available")
        < types.index("finish-step")
        < types.index("tool-output-available")
    )
    assert (
        "".join(c["delta"] for c in chunks if c["type"] == "text-delta" and c["id"] == "2-0")
        == "Sunny."
    )
    text = json.dumps(chunks)
    assert SIGNATURE not in text and REDACTED not in text


async def test_a_failed_run_ends_with_an_error_event() -> None:
    overloaded = ProviderError("Overloaded", scope="scripted", status=529, retryable=True)
    events = [e async for e in sse_events(agent(overloaded).run_stream("Weather?"))]
    assert events == [
        {
            "event": "error",
            "data": json.dumps(
                {
                    "type": "ProviderError",
                    "message": "scripted error 529: Overloaded",
                    "retryable": True,
                }
            ),
        }
    ]
    chunks = [
        c async for c in ui_message_chunks(agent(overloaded).run_stream("Weather?"), message_id="m")
    ]
    assert chunks[1:] == [{"type": "error", "errorText": "scripted error 529: Overloaded"}]


async def test_an_unexpected_failure_stays_on_the_server() -> None:
    def broken(request: Any) -> Message:
        raise RuntimeError("database password is hunter2")

    events = [e async for e in sse_events(agent(broken).run_stream("Weather?"))]
    assert json.loads(events[-1]["data"]) == {
        "type": "InternalError",
        "message": "the run failed on the server",
    }


async def test_warnings_are_events() -> None:
    warning = WarningEvent("thinking_clamped", "high was used", "scripted")
    stream = agent(ScriptedResponse(ANSWER, warnings=[warning])).run_stream("Hi")
    events = [(e["event"], json.loads(e["data"])) async for e in sse_events(stream)]
    assert ("warning", {"code": "thinking_clamped", "message": "high was used"}) in events
    stream = agent(ScriptedResponse(ANSWER, warnings=[warning])).run_stream("Hi")
    chunks = [c async for c in ui_message_chunks(stream)]
    assert {
        "type": "data-warning",
        "data": {"code": "thinking_clamped", "message": "high was used"},
        "transient": True,
    } in chunks


async def test_built_in_tool_parts_and_citations_are_told_without_their_blocks() -> None:
    from thinkagent import Citation, ServerToolCall, ServerToolResult, TextPart

    call = ServerToolCall(
        id="srv_1",
        name="web_search",
        builtin="web_search",
        arguments={"query": "paris"},
        type="server_tool_use",
        data={"type": "server_tool_use", "secret": "encrypted-blob"},
    )
    found = ServerToolResult(
        call_id="srv_1",
        name="web_search",
        builtin="web_search",
        type="web_search_tool_result",
        data={"type": "web_search_tool_result", "encrypted_content": "encrypted-blob"},
    )
    cited = TextPart(
        text="Sunny.",
        citations=(
            Citation(
                type="web_search_result_location",
                url="https://a.example",
                title="A",
                data={"encrypted_index": "encrypted-blob"},
            ),
        ),
    )
    message = Message(role="assistant", parts=(call, found, cited))
    stream = Agent(ScriptedModel([message], chunk_size=6)).run_stream("Search")
    events = [(e["event"], e["data"]) async for e in sse_events(stream)]
    assert not any("encrypted-blob" in data for _, data in events)
    decoded = [(name, json.loads(data)) for name, data in events]
    starts = [d for n, d in decoded if n == "part-start"]
    assert [s["kind"] for s in starts] == ["server_tool_call", "server_tool_result", "text"]
    ends = [d for n, d in decoded if n == "part-end"]
    assert ends[0] == {
        "step": 1,
        "index": 0,
        "kind": "server_tool_call",
        "id": "srv_1",
        "name": "web_search",
        "arguments": {"query": "paris"},
        "builtin": "web_search",
        "approval": False,
    }
    assert ends[1]["call_id"] == "srv_1" and ends[1]["is_error"] is False
    assert ends[2]["citations"] == [{"url": "https://a.example", "title": "A"}]


# --- useChat requests read back; approvals, finish reasons, structured output (issue 25) -------


def ui_user(message_id: str, text: str) -> dict[str, Any]:
    return {"id": message_id, "role": "user", "parts": [{"type": "text", "text": text}]}


async def drain(chunks: Any) -> list[dict[str, Any]]:
    return [chunk async for chunk in chunks]


async def test_a_use_chat_turn_keeps_the_proofs_on_the_server_by_message_id() -> None:
    from thinkagent.sse import UIChat

    stop = ANSWER.model_copy(update={"finish_reason": "stop"})
    model = ScriptedModel([CALLS, stop])
    chat = UIChat()
    turn = chat.turn({"id": "c", "messages": [ui_user("u1", "Weather?")]})
    assert turn.prompt == ["Weather?"] and turn.history == []
    stream = Agent(model, tools=[get_weather]).run_stream(turn.prompt, history=turn.history)
    chunks = await drain(ui_message_chunks(stream, message_id=turn.message_id))
    assert SIGNATURE not in json.dumps(chunks) and REDACTED not in json.dumps(chunks)
    assert chunks[-1] == {
        "type": "finish",
        "finishReason": "stop",
        "messageMetadata": {
            "usage": chunks[-1]["messageMetadata"]["usage"],
            "finishReason": "stop",
        },
    }
    chat = UIChat.load(turn.commit(stream).dump())  # persisted and read back
    assert chat.version == 1 and [e.id for e in chat.entries] == ["u1", turn.message_id]
    # The client sends back only what it holds: no proof. The next turn gets them by id.
    reply = {
        "id": turn.message_id,
        "role": "assistant",
        "parts": [{"type": "text", "text": "Sunny."}],
    }
    nxt = chat.turn(
        {"id": "c", "messages": [ui_user("u1", "Weather?"), reply, ui_user("u2", "More?")]}
    )
    assert nxt.history[1].thinking[0].signature == SIGNATURE
    assert nxt.history[1].thinking[1].redacted == REDACTED
    assert nxt.prompt == ["More?"]


async def test_regenerate_and_an_edited_message_replace_what_came_after() -> None:
    from thinkagent.sse import UIChat

    chat = UIChat()
    turn = chat.turn({"id": "c", "messages": [ui_user("u1", "Hi")]})
    result = await Agent(ScriptedModel([ANSWER])).run(turn.prompt)
    chat = turn.commit(result)
    again = chat.turn(
        {"id": "c", "messages": [ui_user("u1", "Hi")], "trigger": "regenerate-message"}
    )
    assert again.prompt is None and [m.text for m in again.history] == ["Hi"]
    result = await Agent(ScriptedModel([ANSWER])).run(None, history=again.history)
    chat = again.commit(result)
    assert [e.id for e in chat.entries] == ["u1", again.message_id]
    assert [m.role for m in chat.messages] == ["user", "assistant"]  # the user turn once
    edited = chat.turn({"id": "c", "messages": [ui_user("u1", "Hello")]})
    assert edited.history == [] and edited.prompt == ["Hello"]


async def test_approvals_stream_as_requests_and_come_back_as_decisions() -> None:
    from thinkagent import Tool
    from thinkagent.sse import UIChat

    model = ScriptedModel([CALLS.model_copy(update={"finish_reason": "tool_call"}), ANSWER])
    tools = [Tool(get_weather, requires_approval=True)]
    chat = UIChat()
    turn = chat.turn({"id": "c", "messages": [ui_user("u1", "Weather?")]})
    stream = Agent(model, tools=tools).run_stream(turn.prompt)
    chunks = await drain(ui_message_chunks(stream, message_id=turn.message_id))
    request = next(c for c in chunks if c["type"] == "tool-approval-request")
    assert request == {"type": "tool-approval-request", "approvalId": "c1", "toolCallId": "c1"}
    assert chunks[-1]["finishReason"] == "tool-calls"
    chat = turn.commit(stream)
    answered = {
        "id": turn.message_id,
        "role": "assistant",
        "parts": [
            {"type": "step-start"},
            {
                "type": "tool-get_weather",
                "toolCallId": "c1",
                "state": "approval-responded",
                "input": {"city": "Paris"},
                "approval": {"id": "c1", "approved": False, "reason": "Not now."},
            },
        ],
    }
    cont = chat.turn({"id": "c", "messages": [ui_user("u1", "Weather?"), answered]})
    assert cont.message_id == turn.message_id and cont.approvals == {"c1": ToolDenied("Not now.")}
    stream = Agent(model, tools=tools).run_stream(
        None, history=cont.history, approvals=cont.approvals
    )
    chunks = await drain(ui_message_chunks(stream, message_id=cont.message_id, denied=cont.denied))
    assert {"type": "tool-output-denied", "toolCallId": "c1"} in chunks
    chat = cont.commit(stream)
    assert [e.id for e in chat.entries] == ["u1", turn.message_id]  # the same message, continued
    assert [m.role for m in chat.messages] == ["user", "assistant", "user", "assistant"]


async def test_a_structured_output_is_a_data_part() -> None:
    from pydantic import BaseModel

    class Weather(BaseModel):
        city: str

    model = ScriptedModel(
        [
            Message(
                role="assistant",
                parts=(ToolCall(id="o", name="final_result", arguments={"city": "Oslo"}),),
            )
        ]
    )
    stream = Agent(model, output_type=Weather).run_stream("q")
    chunks = await drain(ui_message_chunks(stream))
    assert {"type": "data-output", "data": {"city": "Oslo"}} in chunks
    assert chunks[-1]["finishReason"] == "other"  # the script gave none


def test_bad_use_chat_bodies_say_what_is_wrong() -> None:
    import pytest

    from thinkagent.sse import UIChat, UIRequestError

    chat = UIChat()
    for body, match in [
        ({}, "no messages"),
        ({"messages": [{"role": "user", "parts": []}]}, r"messages\[0\] has no id"),
        ({"messages": [ui_user("u", " ")]}, "no text and no file"),
        ({"messages": [ui_user("u", "x")], "trigger": "resume"}, "unknown trigger"),
        (
            {"messages": [{"id": "a", "role": "assistant", "parts": []}]},
            "no tool call approved or denied",
        ),
    ]:
        with pytest.raises(UIRequestError, match=match):
            chat.turn(body)


def test_a_message_the_chat_does_not_hold_is_read_without_reasoning() -> None:
    from thinkagent.sse import UIChat

    foreign = {
        "id": "a0",
        "role": "assistant",
        "parts": [
            {"type": "reasoning", "text": "made up"},
            {
                "type": "tool-get_weather",
                "toolCallId": "t",
                "state": "output-available",
                "input": {"city": "Rome"},
                "output": "sunny",
            },
            {"type": "step-start"},
            {"type": "text", "text": "Sunny in Rome."},
        ],
    }
    png = "data:image/png;base64,iVBORw0KGgo="
    user = {
        "id": "u0",
        "role": "user",
        "parts": [
            {"type": "file", "mediaType": "image/png", "url": png},
            {"type": "text", "text": "Rome?"},
        ],
    }
    turn = UIChat().turn({"messages": [user, foreign, ui_user("u1", "And Oslo?")]})
    roles = [m.role for m in turn.history]
    assert roles == ["user", "assistant", "user", "assistant"]
    assert turn.history[0].media[0].data == b"\x89PNG\r\n\x1a\n"
    assert all(not m.thinking for m in turn.history)
    assert turn.history[2].tool_results[0].content == "sunny"
