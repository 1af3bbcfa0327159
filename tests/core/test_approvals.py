"""Tools that need approval: the run stops with the calls pending, a later run decides them."""

from __future__ import annotations

import pytest

from thinkagent import (
    Agent,
    ApprovalError,
    Message,
    TextPart,
    ThinkingBlock,
    Tool,
    ToolCall,
    ToolDenied,
    dump_messages,
    load_messages,
    validate_history,
)
from thinkagent.testing import ScriptedModel

deleted: list[str] = []


def delete_file(path: str) -> str:
    """Delete a file."""
    deleted.append(path)
    return f"deleted {path}"


def list_files() -> list[str]:
    return ["a.txt", "b.txt"]


ASKING = Message(
    role="assistant",
    parts=(
        ThinkingBlock.signed("Both files are stale; delete them.", "sig-ask"),
        ToolCall(id="d1", name="delete_file", arguments={"path": "a.txt"}),
        ToolCall(id="d2", name="delete_file", arguments={"path": "b.txt"}),
        ToolCall(id="l1", name="list_files", arguments={}),
    ),
)


def agent(model: ScriptedModel) -> Agent:
    return Agent(model, tools=[Tool(delete_file, requires_approval=True), list_files])


@pytest.fixture(autouse=True)
def _reset() -> None:
    deleted.clear()


async def test_a_run_stops_with_the_calls_pending_and_resumes_with_decisions() -> None:
    first = ScriptedModel([ASKING])
    paused = await agent(first).run("Clean up.")
    assert [c.id for c in paused.pending_approvals] == ["d1", "d2"]
    assert deleted == []  # nothing ran, not even the call that needs no approval
    assert paused.messages[-1] == ASKING.model_copy(
        update={"scope": "scripted", "model": "scripted-model"}
    )
    with pytest.raises(ApprovalError, match="calls 'd1', 'd2' await approval"):
        _ = paused.output
    validate_history(paused.messages)
    saved = dump_messages(paused.messages)  # persisted while waiting

    second = ScriptedModel(
        [Message(role="assistant", parts=(TextPart(text="Deleted a.txt only."),))]
    )
    result = await agent(second).run(
        None, history=load_messages(saved), approvals={"d1": True, "d2": ToolDenied("Keep b.txt.")}
    )
    assert result.output == "Deleted a.txt only."
    assert deleted == ["a.txt"]
    d1, d2, l1 = result.new_messages[0].tool_results
    assert (d1.content, d1.is_error) == ("deleted a.txt", False)
    assert (d2.content, d2.is_error) == ("Keep b.txt.", True)
    assert l1.content == ["a.txt", "b.txt"]
    # The turn that asked went back with its thinking and signature intact.
    sent = second.requests[0].messages
    assert sent[1].thinking == [
        ThinkingBlock.signed("Both files are stale; delete them.", "sig-ask")
    ]
    assert sent[1].tool_calls == ASKING.tool_calls


async def test_false_denies_with_the_default_reason() -> None:
    model = ScriptedModel([Message(role="assistant", parts=(TextPart(text="ok"),))])
    history = [Message.user("q"), ASKING]
    result = await agent(model).run(None, history=history, approvals={"d1": False, "d2": False})
    assert [r.content for r in result.new_messages[0].tool_results[:2]] == [
        "The user denied this tool call."
    ] * 2
    assert deleted == []


async def test_a_call_without_a_decision_keeps_the_run_waiting_without_a_request() -> None:
    model = ScriptedModel([])
    history = [Message.user("q"), ASKING]
    result = await agent(model).run(None, history=history, approvals={"d1": True})
    assert [c.id for c in result.pending_approvals] == ["d2"]
    assert model.requests == [] and deleted == []
    assert result.messages == history


async def test_streamed_runs_stop_for_approval_too() -> None:
    model = ScriptedModel([ASKING])
    async with agent(model).run_stream("Clean up.") as stream:
        async for _ in stream:
            pass
    assert [c.id for c in stream.result.pending_approvals] == ["d1", "d2"]


@pytest.mark.parametrize(
    ("approvals", "match"),
    [
        ({"nope": True}, "no call 'nope' awaits approval"),
        ({"l1": True}, "no call 'l1' awaits approval"),  # needs none
        ({"d1": "yes"}, "must be True, False or ToolDenied"),
    ],
)
async def test_unknown_approval_ids_fail_before_any_request(
    approvals: dict[str, object], match: str
) -> None:
    model = ScriptedModel([])
    with pytest.raises(ApprovalError, match=match):
        await agent(model).run(None, history=[Message.user("q"), ASKING], approvals=approvals)  # type: ignore[arg-type]
    assert model.requests == [] and deleted == []


async def test_approvals_need_a_history_that_waits_for_them() -> None:
    model = ScriptedModel([])
    with pytest.raises(ApprovalError, match="awaiting: none"):
        await agent(model).run(None, history=[Message.user("q")], approvals={"d1": True})
    with pytest.raises(ApprovalError, match="run\\(None, history"):
        await agent(model).run("new", history=[Message.user("q"), ASKING], approvals={"d1": True})
    assert model.requests == []
