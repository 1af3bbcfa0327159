"""Durable runs in one process: checkpoints, ids, parallel steps, deps, events, bad input."""

from __future__ import annotations

import asyncio
import json
import logging
import sqlite3
import time
from typing import Any

import pytest
from dbos import DBOS
from dbos._serialization import DefaultSerializer
from pydantic import BaseModel

from thinkagent import (
    Agent,
    ConfigurationError,
    ModelResponse,
    RunContext,
    TextDelta,
    ThinkingDelta,
    Tool,
    ToolResultEvent,
    dump_messages,
    validate_history,
)
from thinkagent.durable import (
    CheckpointError,
    DurableAgent,
    DurableRunContext,
    WorkflowConflict,
    idempotency_key,
)
from thinkagent.emulator import Emulator
from thinkagent.providers.anthropic import AnthropicModel, ClaudeThinking

PROMPT = "What's the weather and forecast in Paris?"


def get_weather(city: str) -> str:
    """Current weather for a city."""
    return f"sunny in {city}, 21 C"


def get_forecast(city: str) -> str:
    """Weather forecast for a city."""
    return f"rain tomorrow in {city}"


def claude(client: Any) -> AnthropicModel:
    return AnthropicModel("claude-sonnet-4-6", client=client, thinking=ClaudeThinking.adaptive())


async def steps(workflow_id: str) -> list[dict[str, Any]]:
    return await DBOS.list_workflow_steps_async(workflow_id)


async def test_each_model_request_and_tool_call_is_a_step_checkpointed_as_thinkagent_json(
    dbos: Any, name: str, anthropic_client: Any, emu: Emulator
) -> None:
    durable = DurableAgent(
        Agent(claude(anthropic_client), tools=[get_weather, get_forecast]), name=name
    )
    DBOS.launch()
    result = await durable.run(PROMPT, workflow_id="conversation-1")

    validate_history(result.messages)
    recorded = await DBOS.list_workflow_steps_async("conversation-1")
    models = [s for s in recorded if s["function_name"] == f"{name}.model"]
    tools = [s for s in recorded if s["function_name"].startswith(f"{name}.tool.")]
    assistant = [m for m in result.messages if m.role == "assistant"]
    assert len(models) == len(assistant) == len(emu.requests) == 3
    for step, message in zip(models, assistant, strict=True):
        assert isinstance(step["output"], str)  # JSON text, never a pickled object
        # The checkpoint holds the message exactly as dump_messages writes it: proofs included.
        assert json.loads(step["output"])["message"] == json.loads(dump_messages([message]))[0]
        assert message.thinking[0].signature in step["output"]
    results = [p for m in result.messages for p in m.parts if p.kind == "tool_result"]
    assert [json.loads(s["output"])["result"] for s in tools] == [
        r.model_dump(mode="json", exclude_none=True) for r in results
    ]


async def test_the_same_workflow_id_is_the_same_run(
    dbos: Any, name: str, anthropic_client: Any, emu: Emulator
) -> None:
    durable = DurableAgent(
        Agent(claude(anthropic_client), tools=[get_weather, get_forecast]), name=name
    )
    DBOS.launch()
    first = await durable.run(PROMPT, workflow_id="conversation-1")
    sent = len(emu.requests)
    again = await durable.run(PROMPT, workflow_id="conversation-1")
    assert len(emu.requests) == sent  # retried idempotently: nothing asked again
    assert dump_messages(again.messages) == dump_messages(first.messages)
    assert again.output == first.output and again.usage == first.usage
    assert await durable.retrieve("conversation-1").status() == "SUCCESS"
    assert await durable.retrieve("no-such-run").status() is None


async def test_a_workflow_id_reused_for_other_arguments_or_another_agent_is_refused(
    dbos: Any, name: str, anthropic_client: Any, emu: Emulator
) -> None:
    durable = DurableAgent(Agent(claude(anthropic_client), tools=[get_weather]), name=name)
    other = DurableAgent(Agent(claude(anthropic_client)), name=name + "other")
    DBOS.launch()
    await durable.run(PROMPT, workflow_id="conversation-1")
    sent = len(emu.requests)
    with pytest.raises(
        WorkflowConflict,
        match=r"workflow 'conversation-1' is already a run of durable agent '\w+' with other arguments \(its prompt differs\)",
    ) as caught:
        await durable.run("Something else?", workflow_id="conversation-1")
    assert caught.value.workflow_id == "conversation-1"
    with pytest.raises(
        WorkflowConflict, match=r"is a run of 'thinkagent.durable.agent\d+', not of durable agent"
    ):
        await other.run(PROMPT, workflow_id="conversation-1")
    assert len(emu.requests) == sent


async def test_parallel_tool_calls_run_as_parallel_steps(
    dbos: Any, name: str, anthropic_client: Any
) -> None:
    async def slow_weather(city: str) -> str:
        """Current weather for a city."""
        await asyncio.sleep(1.0)
        return f"sunny in {city}"

    agent = Agent(claude(anthropic_client), tools=[Tool(slow_weather, name="get_weather")])
    durable = DurableAgent(agent, name=name)
    DBOS.launch()
    started = time.perf_counter()
    result = await durable.run("What's the weather in Paris and London?", workflow_id="w")
    elapsed = time.perf_counter() - started
    calls = result.messages[1].tool_calls
    assert [c.arguments_dict()["city"] for c in calls] == ["Paris", "London"]
    tools = [s for s in (await steps("w")) if s["function_name"] == f"{name}.tool.get_weather"]
    assert len(tools) == 2
    assert tools[0]["started_at_epoch_ms"] < tools[1]["completed_at_epoch_ms"]
    assert tools[1]["started_at_epoch_ms"] < tools[0]["completed_at_epoch_ms"]  # overlapping
    assert elapsed < 2.0  # one after the other would take 2 s
    # Results stay in call order, each with its own step's record.
    answers = [p.content for p in result.messages[2].parts if p.kind == "tool_result"]
    assert answers == ["sunny in Paris", "sunny in London"]


class Settings(BaseModel):
    unit: str


async def test_deps_are_checkpointed_as_json_and_tools_get_their_step_id(
    dbos: Any, name: str, anthropic_client: Any
) -> None:
    seen: list[Any] = []

    def get_weather(ctx: RunContext[Settings], city: str) -> str:
        """Current weather for a city."""
        seen.append(ctx)
        return f"21 {ctx.deps.unit} in {city}"

    agent = Agent(claude(anthropic_client), deps_type=Settings, tools=[get_weather])
    durable = DurableAgent(agent, name=name)
    DBOS.launch()
    result = await durable.run("Weather in Paris?", workflow_id="w", deps=Settings(unit="C"))
    assert "21 C in Paris" in result.output
    (ctx,) = seen
    assert isinstance(ctx, DurableRunContext) and ctx.deps == Settings(unit="C")
    step = next(s for s in (await steps("w")) if s["function_name"] == f"{name}.tool.get_weather")
    assert ctx.workflow_id == "w" and ctx.step_id == step["function_id"]
    assert idempotency_key(ctx) == f"w:{step['function_id']}"
    assert ctx.tool_call_id == result.messages[1].tool_calls[0].id
    with pytest.raises(ConfigurationError, match="not running as a DBOS step"):
        idempotency_key(RunContext(None, ctx.usage, [], ctx.model))


async def test_deps_that_cannot_be_checkpointed_are_refused_before_anything_runs(
    dbos: Any, name: str, anthropic_client: Any, emu: Emulator
) -> None:
    class Client:  # a live object: pydantic cannot dump it
        pass

    with pytest.raises(
        ConfigurationError, match=r"deps_type .*Client.* cannot be checkpointed as JSON"
    ):
        DurableAgent(Agent(claude(anthropic_client), deps_type=Client), name=name)
    durable = DurableAgent(Agent(claude(anthropic_client)), name=name + "b")
    DBOS.launch()
    with pytest.raises(ConfigurationError, match="declares no deps_type"):
        await durable.run("Hi", workflow_id="w", deps=Client())
    assert emu.requests == []
    assert await durable.retrieve("w").status() is None  # nothing was started


def test_bad_configuration_is_refused(dbos: Any, name: str, anthropic_client: Any) -> None:
    agent = Agent(claude(anthropic_client), tools=[get_weather])
    with pytest.raises(
        ConfigurationError, match="not_idempotent names tools the agent does not have: send_email"
    ):
        DurableAgent(agent, name=name, not_idempotent=["send_email"])
    keep = DurableAgent(agent, name=name)
    with pytest.raises(ConfigurationError, match=f"a durable agent named '{name}' already exists"):
        DurableAgent(agent, name=name)
    with pytest.raises(ConfigurationError, match="needs a name"):
        DurableAgent(agent, name=" ")
    assert repr(keep) == f"DurableAgent('{name}')"


def _corrupt(db: str, workflow_id: str, step: int, serialized: str) -> None:
    with sqlite3.connect(db.removeprefix("sqlite:///")) as connection:
        connection.execute(
            "UPDATE operation_outputs SET output = ? WHERE workflow_uuid = ? AND function_id = ?",
            (serialized, workflow_id, step),
        )


@pytest.mark.parametrize(
    "serialized",
    [DefaultSerializer().serialize('{"message": {"role": "assistant"'), "not base64 at all!"],
    ids=["not-a-response", "undecodable"],
)
async def test_a_corrupt_checkpoint_is_reported_with_the_workflow_and_step(
    dbos: Any, name: str, sqlite_db: str, anthropic_client: Any, serialized: str
) -> None:
    durable = DurableAgent(Agent(claude(anthropic_client), tools=[get_weather]), name=name)
    DBOS.launch()
    await durable.run("Weather in Paris?", workflow_id="w")
    _corrupt(sqlite_db, "w", 1, serialized)
    # A fork replays the steps before its start step from their checkpoints.
    fork = await DBOS.fork_workflow_async("w", 3)
    with pytest.raises(
        CheckpointError,
        match=rf"workflow '{fork.get_workflow_id()}', step 1 \({name}.model\): the checkpointed",
    ) as caught:
        await durable.retrieve(fork.get_workflow_id()).result()
    assert caught.value.step == f"1 ({name}.model)"


async def test_a_replayed_tool_failure_gives_the_model_the_same_text(
    dbos: Any, name: str, anthropic_client: Any, emu: Emulator
) -> None:
    def get_weather(city: str) -> str:
        """Current weather for a city."""
        raise LookupError(f"no station in {city}")

    agent = Agent(claude(anthropic_client), tools=[Tool(get_weather, max_retries=0)])
    durable = DurableAgent(agent, name=name)
    DBOS.launch()
    with pytest.raises(Exception, match="get_weather"):
        await durable.run("Weather in Paris?", workflow_id="w")
    original = [s for s in (await steps("w"))]
    text = json.loads(next(s for s in original if "tool" in s["function_name"])["output"])
    assert (
        text["result"]["content"] == "Tool 'get_weather' failed: LookupError: no station in Paris"
    )
    assert text["result"]["is_error"] is True


async def test_events_follow_the_run_by_id(dbos: Any, name: str, anthropic_client: Any) -> None:
    durable = DurableAgent(
        Agent(claude(anthropic_client), tools=[get_weather, get_forecast]), name=name
    )
    DBOS.launch()
    run = await durable.start(PROMPT, workflow_id="w")
    events = [event async for event in durable.retrieve("w").events()]
    result = await run.result()
    assert [type(e) for e in events] == [ModelResponse, ToolResultEvent] * 2 + [ModelResponse]
    responses = [e.message for e in events if isinstance(e, ModelResponse)]
    assert dump_messages(responses) == dump_messages(
        [m for m in result.messages if m.role == "assistant"]
    )
    later = [event async for event in run.events(offset=4)]
    assert later == events[4:]


async def test_streamed_deltas_are_published_and_the_result_is_the_same(
    dbos: Any, name: str, anthropic_client: Any
) -> None:
    agent = Agent(claude(anthropic_client), tools=[get_weather, get_forecast])
    plain = DurableAgent(agent, name=name)
    streamed = DurableAgent(agent, name=name + "s", stream_deltas=True)
    DBOS.launch()
    expected = await plain.run(PROMPT, workflow_id="plain")
    result = await streamed.run(PROMPT, workflow_id="streamed")
    assert dump_messages(result.messages) == dump_messages(expected.messages)
    events = [event async for event in streamed.retrieve("streamed").events()]
    kinds = {type(e) for e in events}
    assert {ThinkingDelta, TextDelta, ModelResponse, ToolResultEvent} <= kinds
    first = events.index(next(e for e in events if isinstance(e, ModelResponse)))
    thinking = "".join(e.text for e in events[:first] if isinstance(e, ThinkingDelta))
    assert thinking == result.messages[1].thinking[0].text


class Forecast(BaseModel):
    city: str
    summary: str


async def test_structured_output_and_an_instructions_function_survive_the_checkpoints(
    dbos: Any, name: str, anthropic_client: Any
) -> None:
    calls: list[str] = []

    def instructions(ctx: RunContext[None]) -> str:
        calls.append("called")
        return "Answer about the weather."

    agent = Agent(
        claude(anthropic_client),
        output_type=Forecast,
        instructions=instructions,
        tools=[get_weather],
    )
    durable = DurableAgent(agent, name=name)
    DBOS.launch()
    result = await durable.run("Weather in Paris?", workflow_id="w")
    assert isinstance(result.output, Forecast)
    assert calls == ["called"]
    assert any(s["function_name"] == f"{name}.instructions" for s in (await steps("w")))
    again = await durable.run("Weather in Paris?", workflow_id="w")
    assert again.output == result.output and calls == ["called"]


async def test_a_run_stopped_for_approval_continues_in_another_durable_run(
    dbos: Any, name: str, anthropic_client: Any
) -> None:
    agent = Agent(claude(anthropic_client), tools=[Tool(get_weather, requires_approval=True)])
    durable = DurableAgent(agent, name=name)
    DBOS.launch()
    stopped = await durable.run("Weather in Paris?", workflow_id="ask")
    (call,) = stopped.pending_approvals
    assert stopped.messages[-1].tool_calls == [call]
    done = await durable.run(
        None, history=stopped.messages, approvals={call.id: True}, workflow_id="go"
    )
    assert "sunny in Paris" in done.output
    validate_history(done.messages)


# --- conversations, approvals by argument, resuming after ToolInterrupted (issue 25) ----------


async def test_a_second_turn_with_the_conversation_id_as_workflow_id_raises_workflow_conflict(
    dbos: Any, name: str, anthropic_client: Any, emu: Emulator
) -> None:
    """Defect 6 (issue 25): the docs suggested a conversation id as the workflow id, and the
    second turn raised `WorkflowConflict`. Each turn's id is now derived from the conversation
    (`conversation_id=`): a retried turn is the same run, the next turn a new one."""
    durable = DurableAgent(Agent(claude(anthropic_client), tools=[get_weather]), name=name)
    DBOS.launch()
    first = await durable.run("Weather in Paris?", conversation_id="conv-7")
    with pytest.raises(WorkflowConflict):  # what the old advice led to
        await durable.run("Weather in Paris?", workflow_id="conv-7x")
        await durable.run("And in Rome?", history=first.messages, workflow_id="conv-7x")
    second = await durable.run("And in Rome?", history=first.messages, conversation_id="conv-7")
    assert "Rome" in second.output
    requests = len(emu.requests)
    again = await durable.run("And in Rome?", history=first.messages, conversation_id="conv-7")
    assert again.output == second.output and len(emu.requests) == requests  # ran once
    turns = [s.workflow_id for s in await DBOS.list_workflows_async()]
    conv = sorted(t for t in turns if t.startswith("conv-7:"))
    assert len(conv) == 2
    turn = durable.turn_id("conv-7", "And in Rome?", history=first.messages)
    assert turn in conv
    assert durable.turn_id("conv-7", "And in Rome?", history=first.messages, attempt=1) != turn
    validate_history(second.messages)


async def test_a_conversation_continues_after_tool_interrupted(
    dbos: Any, name: str, anthropic_client: Any
) -> None:
    from thinkagent.durable import ToolInterrupted

    agent = Agent(claude(anthropic_client), tools=[get_weather, Tool(get_forecast)])
    durable = DurableAgent(agent, name=name, not_idempotent=["get_forecast"])
    DBOS.launch()
    first = await durable.run("Weather in Paris?", conversation_id="conv-i")
    # The evidence a ToolInterrupted carries: the history up to the call it stopped at (here
    # from a run that stopped at the same call for approval).
    stopping = Agent(claude(anthropic_client), tools=[Tool(get_forecast, requires_approval=True)])
    paused = await stopping.run("What's the forecast in Paris?", history=first.messages)
    (call,) = paused.pending_approvals
    error = ToolInterrupted(
        "interrupted", workflow_id="w", tool_name="get_forecast", call_id=call.id, step=3
    ).with_evidence(paused.messages, paused.usage)
    history = error.with_result("rain tomorrow in Paris (checked by hand)")
    result = await durable.run(None, history=history, conversation_id="conv-i")
    assert "checked by hand" in result.output
    validate_history(result.messages)
    assert result.messages[: len(paused.messages)] == paused.messages


def pay(ctx: RunContext[None], to: str, amount: int) -> str:
    """Send money."""
    from thinkagent import ApprovalRequired

    if amount > 100 and not ctx.tool_call_approved:
        raise ApprovalRequired(f"{amount} is over 100")
    return f"sent {amount} to {to}"


async def test_approvals_by_argument_round_trip_through_a_durable_run(
    dbos: Any, name: str, anthropic_client: Any
) -> None:
    from thinkagent import ToolApproved

    agent = Agent(claude(anthropic_client), tools=[pay])
    durable = DurableAgent(agent, name=name)
    DBOS.launch()
    paused = await durable.run("Pay 500 to Bob.", conversation_id="conv-p")
    (call,) = paused.pending_approvals
    assert paused.approval_reasons == {call.id: f"{call.arguments_dict()['amount']} is over 100"}
    done = await durable.run(
        None,
        history=paused.messages,
        approvals={call.id: ToolApproved(arguments={"to": "Bob", "amount": 90})},
        conversation_id="conv-p",
    )
    assert "sent 90 to Bob" in done.new_messages[0].tool_results[0].content_text()
    validate_history(done.messages)


async def test_a_durable_run_to_a_real_provider_is_blocked_in_tests(dbos: Any, name: str) -> None:
    import anthropic

    from thinkagent.testing import ModelRequestsBlocked, block_model_requests

    client = anthropic.AsyncAnthropic(api_key="not-a-key", max_retries=0)
    durable = DurableAgent(Agent(claude(client)), name=name)
    DBOS.launch()
    with block_model_requests(), pytest.raises(ModelRequestsBlocked, match=r"api\.anthropic\.com"):
        await durable.run("Hello.")
    await client.close()


async def test_a_cancelled_step_logs_no_proof_at_dbos_default_level(
    dbos: Any, name: str, anthropic_client: Any, caplog: pytest.LogCaptureFixture
) -> None:
    # issue 26: DBOS warns about a cancelled step with its callable, whose arguments held the
    # run's messages (thinking text and signatures)
    started = asyncio.Event()

    async def slow_forecast(city: str) -> str:
        """Weather forecast for a city."""
        started.set()
        await asyncio.sleep(60)
        return f"rain tomorrow in {city}"

    durable = DurableAgent(Agent(claude(anthropic_client), tools=[slow_forecast]), name=name)
    DBOS.launch()
    dbos_log = logging.getLogger("dbos")
    dbos_log.addHandler(caplog.handler)
    try:
        with caplog.at_level(logging.INFO, logger="dbos"):
            run = asyncio.ensure_future(durable.run(PROMPT, workflow_id="cancelled"))
            await asyncio.wait_for(started.wait(), 30)
            # What Ctrl-C does under asyncio.run: every task is cancelled, the step's included
            # (the workflow runs on in tasks of its own when only its caller is cancelled).
            others = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in others:
                task.cancel()
            await asyncio.gather(*others, return_exceptions=True)
    finally:
        dbos_log.removeHandler(caplog.handler)
    assert run.cancelled()
    cancelled = [r.getMessage() for r in caplog.records if "task cancelled" in r.getMessage()]
    assert cancelled, "DBOS said nothing of the cancelled step: nothing was checked"
    (model_step,) = [s for s in await steps("cancelled") if s["function_name"].endswith(".model")]
    message = json.loads(model_step["output"])["message"]
    proofs = [p["signature"] for p in message["parts"] if p.get("signature")]
    assert proofs
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert not [p for p in proofs if p[:40] in logged], logged
    assert "RunContext" not in logged and "ModelRequest" not in logged, logged
