"""Tools that need approval: the run stops with the calls pending, a later run decides them."""

from __future__ import annotations

import pytest

from thinkagent import (
    Agent,
    ApprovalError,
    ApprovalRequired,
    Message,
    RunContext,
    TextPart,
    ThinkingBlock,
    Tool,
    ToolApproved,
    ToolCall,
    ToolDenied,
    ToolResultEvent,
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
        ({"d1": "yes"}, "must be True, False, ToolApproved"),
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


# --- approvals that depend on the arguments (issue 25) -----------------------------------------

transfers: list[tuple[str, int]] = []


def transfer(ctx: RunContext[None], to: str, amount: int) -> str:
    """Send money."""
    if amount > 100 and not ctx.tool_call_approved:
        raise ApprovalRequired(f"{amount} is over the limit of 100")
    transfers.append((to, amount))
    return f"sent {amount} to {to}"


def balance() -> int:
    return 1000


PAYING = Message(
    role="assistant",
    parts=(
        ThinkingBlock.signed("Pay both, check the balance.", "sig-pay"),
        ToolCall(id="t1", name="transfer", arguments={"to": "ann", "amount": 50}),
        ToolCall(id="t2", name="transfer", arguments={"to": "bob", "amount": 500}),
        ToolCall(id="b1", name="balance", arguments={}),
    ),
)


def paying_agent(model: ScriptedModel) -> Agent:
    return Agent(model, tools=[transfer, balance])


@pytest.fixture(autouse=True)
def _reset_transfers() -> None:
    transfers.clear()


async def test_a_tool_raising_approval_required_pauses_its_call_and_keeps_the_others_results() -> (
    None
):
    paused = await paying_agent(ScriptedModel([PAYING])).run("Pay them.")
    assert [c.id for c in paused.pending_approvals] == ["t2"]
    assert paused.approval_reasons == {"t2": "500 is over the limit of 100"}
    assert transfers == [("ann", 50)]  # the calls that needed nothing ran once
    done = paused.messages[-1]
    assert [r.call_id for r in done.tool_results] == ["t1", "b1"]  # in call order
    saved = load_messages(dump_messages(paused.messages))  # persisted while waiting

    model = ScriptedModel([Message(role="assistant", parts=(TextPart(text="Paid."),))])
    result = await paying_agent(model).run(None, history=saved, approvals={"t2": True})
    assert result.output == "Paid."
    assert transfers == [("ann", 50), ("bob", 500)]  # nothing ran twice
    merged = result.new_messages[0]
    assert [r.call_id for r in merged.tool_results] == ["t1", "t2", "b1"]
    assert merged.tool_results[1].content == "sent 500 to bob"
    assert result.messages[: len(saved) - 1] == saved[:-1]
    validate_history(result.messages)
    sent = model.requests[0].messages
    assert sent[1].thinking[0].signature == "sig-pay"  # the asking turn, intact
    assert [r.call_id for r in sent[2].tool_results] == ["t1", "t2", "b1"]


async def test_a_denied_call_that_asked_from_inside_is_answered_with_the_reason() -> None:
    paused = await paying_agent(ScriptedModel([PAYING])).run("Pay them.")
    model = ScriptedModel([Message(role="assistant", parts=(TextPart(text="Only Ann."),))])
    result = await paying_agent(model).run(
        None, history=paused.messages, approvals={"t2": ToolDenied("Too much.")}
    )
    assert transfers == [("ann", 50)]
    t2 = result.new_messages[0].tool_results[1]
    assert (t2.content, t2.is_error) == ("Too much.", True)


async def test_a_tool_asking_again_after_approval_is_an_error() -> None:
    def stubborn() -> str:
        raise ApprovalRequired("always")

    model = ScriptedModel(
        [Message(role="assistant", parts=(ToolCall(id="s", name="stubborn", arguments={}),))]
    )
    paused = await Agent(model, tools=[stubborn]).run("go")
    assert paused.approval_reasons == {"s": "always"}
    with pytest.raises(ApprovalError, match="asked for approval again"):
        await Agent(ScriptedModel([]), tools=[stubborn]).run(
            None, history=paused.messages, approvals={"s": True}
        )


async def test_a_predicate_decides_per_call_before_anything_runs() -> None:
    seen: list[dict[str, object]] = []

    def large(ctx: RunContext[None], arguments: dict[str, object]) -> bool:
        seen.append(arguments)
        return int(arguments.get("amount", 0)) > 100  # type: ignore[call-overload]

    def pay(to: str, amount: int) -> str:
        transfers.append((to, amount))
        return "ok"

    calls = Message(
        role="assistant",
        parts=(
            ToolCall(id="p1", name="pay", arguments={"to": "ann", "amount": 50}),
            ToolCall(id="p2", name="pay", arguments={"to": "bob", "amount": 500}),
        ),
    )
    tool = Tool(pay, requires_approval=large)
    paused = await Agent(ScriptedModel([calls]), tools=[tool]).run("Pay.")
    assert [c.id for c in paused.pending_approvals] == ["p2"]
    assert transfers == []  # decided before any call of the step ran
    assert seen == [{"to": "ann", "amount": 50}, {"to": "bob", "amount": 500}]


async def test_the_approver_may_edit_the_arguments() -> None:
    paused = await paying_agent(ScriptedModel([PAYING])).run("Pay them.")
    model = ScriptedModel([Message(role="assistant", parts=(TextPart(text="Paid less."),))])
    result = await paying_agent(model).run(
        None,
        history=paused.messages,
        approvals={"t2": ToolApproved(arguments={"to": "bob", "amount": 90})},
    )
    assert transfers == [("ann", 50), ("bob", 90)]
    assert result.new_messages[0].tool_results[1].content == "sent 90 to bob"
    # The model's call is kept as it made it: its proof binds it.
    assert result.messages[1].tool_calls[1].arguments == {"to": "bob", "amount": 500}


async def test_edited_arguments_are_validated_like_the_models() -> None:
    paused = await paying_agent(ScriptedModel([PAYING])).run("Pay them.")
    model = ScriptedModel([Message(role="assistant", parts=(TextPart(text="Hm."),))])
    result = await paying_agent(model).run(
        None,
        history=paused.messages,
        approvals={"t2": ToolApproved(arguments={"to": "bob", "amount": "lots"})},
    )
    t2 = result.new_messages[0].tool_results[1]
    assert t2.is_error and "amount" in t2.content_text()
    assert transfers == [("ann", 50)]


async def test_a_streamed_run_yields_the_results_that_ran_before_the_pause() -> None:
    async with paying_agent(ScriptedModel([PAYING])).run_stream("Pay them.") as stream:
        results = [e.result.call_id async for e in stream if isinstance(e, ToolResultEvent)]
    assert results == ["t1", "b1"]
    assert [c.id for c in stream.result.pending_approvals] == ["t2"]
