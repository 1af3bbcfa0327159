"""AG-UI both ways, without a client: the events a run streams (reasoning, text, tool calls,
results, state, an interrupt for approval), and the inputs read back into a history whose
proofs stay on the server (issue 25)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from thinkagent import Agent, Message, TextPart, ThinkingBlock, Tool, ToolCall, ToolDenied
from thinkagent.ag_ui import AGUIRequestError, AGUIThread, ag_ui_events
from thinkagent.testing import ScriptedModel

SIGNATURE = "c2lnbmF0dXJlLW9mLXRoZS10aGlua2luZy1ibG9jaw=="
REDACTED = "cmVkYWN0ZWQtcGF5bG9hZA=="
CALLS = Message(
    role="assistant",
    parts=(
        ThinkingBlock.signed("Weather first.", SIGNATURE),
        ThinkingBlock.redacted_payload(REDACTED),
        TextPart(text="Looking."),
        ToolCall(id="c1", name="get_weather", arguments={"city": "Paris"}),
    ),
    finish_reason="tool_call",
)
ANSWER = Message(role="assistant", parts=(TextPart(text="Sunny."),), finish_reason="stop")


def get_weather(city: str) -> str:
    """Current weather for a city."""
    return f"sunny in {city}"


def body(messages: list[dict[str, Any]], run: str = "r1", **extra: Any) -> dict[str, Any]:
    return {"threadId": "t", "runId": run, "messages": messages, **extra}


async def events_of(turn: Any, agent: Agent[Any, Any]) -> tuple[list[dict[str, Any]], Any]:
    stream = agent.run_stream(turn.prompt, history=turn.history, approvals=turn.approvals)
    return [e async for e in turn.events(stream)], stream


async def test_a_run_streams_as_ag_ui_events_without_a_proof() -> None:
    model = ScriptedModel([CALLS, ANSWER], chunk_size=5)
    turn = AGUIThread().turn(body([{"id": "u1", "role": "user", "content": "Weather?"}]))
    events, _ = await events_of(turn, Agent(model, tools=[get_weather]))
    types = [e["type"] for e in events]
    assert types[0] == "RUN_STARTED" and types[-1] == "RUN_FINISHED"
    assert types[1:6] == [
        "STEP_STARTED",
        "REASONING_START",
        "REASONING_MESSAGE_START",
        "REASONING_MESSAGE_CONTENT",
        "REASONING_MESSAGE_CONTENT",
    ]
    redacted = [e for e in events if e.get("metadata") == {"thinkagent": {"redacted": True}}]
    assert [e["type"] for e in redacted] == ["REASONING_MESSAGE_START"]
    call = next(e for e in events if e["type"] == "TOOL_CALL_START")
    text = next(e for e in events if e["type"] == "TEXT_MESSAGE_START")
    assert call["parentMessageId"] == text["messageId"]  # the step's text holds its calls
    args = "".join(e["delta"] for e in events if e["type"] == "TOOL_CALL_ARGS")
    assert json.loads(args) == {"city": "Paris"}
    result = next(e for e in events if e["type"] == "TOOL_CALL_RESULT")
    assert result["content"] == "sunny in Paris" and result["toolCallId"] == "c1"
    state = [e["snapshot"] for e in events if e["type"] == "STATE_SNAPSHOT"]
    assert state[-1]["finishReason"] == "stop" and "usage" in state[-1]
    assert events[-1]["outcome"] == {"type": "success"} and events[-1]["result"] == "Sunny."
    dumped = json.dumps(events)
    assert SIGNATURE not in dumped and REDACTED not in dumped


async def test_an_approval_is_an_interrupt_and_resume_decides_it() -> None:
    tools = [Tool(get_weather, requires_approval=True)]
    model = ScriptedModel([CALLS, ANSWER])
    thread = AGUIThread()
    user = {"id": "u1", "role": "user", "content": "Weather?"}
    turn = thread.turn(body([user]))
    events, stream = await events_of(turn, Agent(model, tools=tools))
    outcome = events[-1]["outcome"]
    assert outcome["type"] == "interrupt"
    (interrupt,) = outcome["interrupts"]
    assert interrupt["id"] == "c1" and interrupt["reason"] == "tool_approval"
    assert interrupt["metadata"]["thinkagent"]["arguments"] == {"city": "Paris"}
    thread = AGUIThread.load(turn.commit(stream).dump())
    held = [user, {"id": "r1-1-2", "role": "assistant", "content": "Looking."}]
    resumed = thread.turn(body(held, "r2", resume=[{"interruptId": "c1", "status": "cancelled"}]))
    assert resumed.approvals == {"c1": False} and resumed.prompt is None
    assert resumed.history[1].thinking[0].signature == SIGNATURE  # from the server, by id
    events, stream = await events_of(resumed, Agent(model, tools=tools))
    result = next(e for e in events if e["type"] == "TOOL_CALL_RESULT")
    assert result["metadata"] == {"thinkagent": {"isError": True, "denied": True}}
    thread = resumed.commit(stream)
    assert len(thread.entries) == 2 and "r2-result-c1" in thread.entries[1].ids
    decisions = thread.turn(
        body(
            held,
            "r3",
            resume=[
                {"interruptId": "a", "status": "resolved"},
                {
                    "interruptId": "b",
                    "status": "resolved",
                    "payload": {"approved": False, "reason": "No."},
                },
                {
                    "interruptId": "c",
                    "status": "resolved",
                    "payload": {"arguments": {"city": "Rome"}},
                },
            ],
        )
    ).approvals
    from thinkagent import ToolApproved

    assert decisions == {
        "a": True,
        "b": ToolDenied("No."),
        "c": ToolApproved(arguments={"city": "Rome"}),
    }


async def test_asking_the_last_question_again_and_a_new_question() -> None:
    thread = AGUIThread()
    user = {"id": "u1", "role": "user", "content": "Hi"}
    turn = thread.turn(body([user]))
    result = await Agent(ScriptedModel([ANSWER])).run(turn.prompt)
    thread = turn.commit(result)
    again = thread.turn(body([user], "r2"))  # the messages end with the question
    assert again.prompt is None and [m.text for m in again.history] == ["Hi"]
    nxt = thread.turn(
        body(
            [
                user,
                {"id": "r1-1-0", "role": "assistant", "content": "Sunny."},
                {"id": "u2", "role": "user", "content": [{"type": "text", "text": "More?"}]},
            ],
            "r3",
        )
    )
    assert nxt.prompt == ["More?"] and len(nxt.history) == 2


def test_bad_inputs_say_what_is_wrong() -> None:
    thread = AGUIThread()
    for given, match in [
        ({"messages": []}, "threadId and a runId"),
        (body("nope"), "no messages list"),  # type: ignore[arg-type]
        (body([{"role": "user", "content": "x"}]), r"messages\[0\] has no id"),
        (body([]), "nothing to run"),
        (body([{"id": "u", "role": "user", "content": " "}]), "empty"),
        (body([], resume=[{"interruptId": "x", "status": "resolved"}]), "resume answers a run"),
    ]:
        with pytest.raises(AGUIRequestError, match=match):
            thread.turn(given)


async def test_ag_ui_events_of_a_failed_run_end_with_run_error() -> None:
    from thinkagent import ProviderError

    model = ScriptedModel([ProviderError("overloaded", scope="scripted", status=529)])
    stream = Agent(model).run_stream("q")
    events = [e async for e in ag_ui_events(stream, thread_id="t", run_id="r")]
    assert [e["type"] for e in events] == ["RUN_STARTED", "RUN_ERROR"]
    assert "overloaded" in events[-1]["message"]
