"""The agent loop, driven by the scripted model."""

from __future__ import annotations

import asyncio
import sys
import threading
from typing import Any

import pytest

from thinkagent import (
    Agent,
    HistoryError,
    MaxTurnsExceeded,
    Message,
    ModelResponse,
    ProviderError,
    RunCancelled,
    RunResult,
    StreamInterrupted,
    TextDelta,
    TextPart,
    ThinkingBlock,
    ThinkingDelta,
    Tool,
    ToolCall,
    ToolCallDelta,
    ToolResultEvent,
    ToolRetriesExceeded,
    Usage,
    UsageLimitExceeded,
    UsageLimits,
    dump_messages,
    load_messages,
    trim_history,
    validate_history,
)
from thinkagent.testing import ScriptedModel, ScriptedResponse


def reply(*parts: Any, usage: Usage | None = None) -> Message:
    return Message(
        role="assistant",
        parts=tuple(parts),
        usage=usage or Usage(input_tokens=10, output_tokens=5, thinking_tokens=3),
    )


def calls(*names_and_args: tuple[str, dict[str, Any]]) -> Message:
    return reply(
        ThinkingBlock.signed("I need tools.", "sig-tools"),
        *(ToolCall(id=f"call_{i}", name=n, arguments=a) for i, (n, a) in enumerate(names_and_args)),
    )


def answer(text: str = "The answer.") -> Message:
    return reply(ThinkingBlock.signed("I can answer now.", "sig-answer"), TextPart(text=text))


def get_weather(city: str) -> str:
    """Current weather for a city."""
    return f"sunny in {city}"


async def test_run_returns_output_messages_and_summed_usage() -> None:
    model = ScriptedModel([calls(("get_weather", {"city": "Paris"})), answer("Sunny.")])
    result = await Agent(model, tools=[get_weather]).run("Weather in Paris?")
    assert result.output == "Sunny."
    assert [m.role for m in result.messages] == ["user", "assistant", "user", "assistant"]
    assert result.new_messages == result.messages
    assert result.messages[2].tool_results[0].content == "sunny in Paris"
    assert result.usage == Usage(input_tokens=20, output_tokens=10, thinking_tokens=6, requests=2)
    assert result.messages[1].thinking == [ThinkingBlock.signed("I need tools.", "sig-tools")]
    assert result.messages[1].scope == "scripted"
    second_request = model.requests[1]
    assert second_request.messages == result.messages[:3]  # the thinking went back verbatim
    assert [t.name for t in second_request.tools] == ["get_weather"]


async def test_history_is_kept_verbatim_and_new_messages_split_off() -> None:
    first = await Agent(ScriptedModel([answer("one")])).run("first")
    second = await Agent(ScriptedModel([answer("two")])).run("second", history=first.messages)
    assert second.messages[:2] == first.messages
    assert [m.text for m in second.new_messages] == ["second", "two"]


async def test_run_stream_equals_run_and_thinking_precedes_text() -> None:
    script = [
        calls(("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Rome"})),
        answer(),
    ]
    expected = await Agent(ScriptedModel(script), tools=[get_weather]).run("q")
    events: list[object] = []
    async with Agent(ScriptedModel(script, chunk_size=3), tools=[get_weather]).run_stream(
        "q"
    ) as stream:
        async for event in stream:
            events.append(event)
    assert stream.result == expected
    kinds = [type(e) for e in events]
    assert kinds.index(ThinkingDelta) < kinds.index(ToolCallDelta) < kinds.index(ModelResponse)
    last_turn = events[events.index(next(e for e in events if isinstance(e, ToolResultEvent))) :]
    last_kinds = [type(e) for e in last_turn]
    assert last_kinds.index(ThinkingDelta) < last_kinds.index(TextDelta)
    results = [e.result.call_id for e in events if isinstance(e, ToolResultEvent)]
    assert results == ["call_0", "call_1"]
    assert sum(isinstance(e, ModelResponse) for e in events) == 2


async def test_run_stream_can_be_iterated_without_a_context_manager() -> None:
    stream = Agent(ScriptedModel([answer("hi")])).run_stream("q")
    assert [e async for e in stream][-1] == ModelResponse(stream.result.messages[-1])
    with pytest.raises(RuntimeError, match="not finished"):
        _ = Agent(ScriptedModel([answer()])).run_stream("q").result


async def test_a_raising_tool_goes_back_to_the_model_as_an_error() -> None:
    def flaky(n: int) -> str:
        raise ValueError(f"cannot handle {n}")

    model = ScriptedModel([calls(("flaky", {"n": 3})), answer()])
    result = await Agent(model, tools=[flaky]).run("q")
    error = result.messages[2].tool_results[0]
    assert error.is_error
    assert error.content == "Tool 'flaky' failed: ValueError: cannot handle 3"


async def test_invalid_arguments_go_back_before_the_tool_runs() -> None:
    ran: list[int] = []

    def square(n: int) -> int:
        ran.append(n)
        return n * n

    model = ScriptedModel([calls(("square", {"n": "many"})), calls(("square", {"n": 4})), answer()])
    result = await Agent(model, tools=[square]).run("q")
    first, second = result.messages[2].tool_results[0], result.messages[4].tool_results[0]
    assert first.is_error and "Invalid arguments for tool 'square': n:" in str(first.content)
    assert second.content == 16 and not second.is_error
    assert ran == [4]


async def test_unknown_tools_and_bad_json_are_reported_to_the_model() -> None:
    model = ScriptedModel(
        [
            reply(
                ToolCall(id="a", name="nope", arguments={}),
                ToolCall(id="b", name="get_weather", arguments="{oops"),
            ),
            answer(),
        ]
    )
    result = await Agent(model, tools=[get_weather]).run("q")
    unknown, bad = result.messages[2].tool_results
    assert unknown.content == "Unknown tool 'nope'. Available tools: get_weather."
    assert bad.is_error and "not a JSON object" in str(bad.content)


async def test_tool_retries_are_bounded() -> None:
    def broken() -> str:
        raise RuntimeError("down")

    model = ScriptedModel([calls(("broken", {}))] * 3 + [answer()])
    agent = Agent(model, tools=[Tool(broken, max_retries=1)])
    with pytest.raises(ToolRetriesExceeded, match="failed in 2 model turns in a row") as info:
        await agent.run("q")
    assert len(model.requests) == 2
    validate_history(info.value.messages)
    assert info.value.messages[-1].tool_results[0].is_error
    assert info.value.usage is not None and info.value.usage.requests == 2


async def test_parallel_calls_run_concurrently_and_keep_call_order() -> None:
    started: list[str] = []
    both = asyncio.Event()

    async def slow(label: str) -> str:
        started.append(label)
        if len(started) == 2:
            both.set()
        await asyncio.wait_for(both.wait(), 2)  # only finishes if the other call runs too
        await asyncio.sleep(0.01 if label == "first" else 0)
        return label.upper()

    model = ScriptedModel(
        [calls(("slow", {"label": "first"}), ("slow", {"label": "second"})), answer()]
    )
    result = await Agent(model, tools=[slow]).run("q")
    assert [r.content for r in result.messages[2].tool_results] == ["FIRST", "SECOND"]


async def test_tool_timeout_is_an_error_result() -> None:
    async def hangs() -> str:
        await asyncio.sleep(10)
        return "never"

    model = ScriptedModel([calls(("hangs", {})), answer()])
    result = await Agent(model, tools=[Tool(hangs, timeout=0.05)]).run("q")
    assert (
        result.messages[2].tool_results[0].content == "Tool 'hangs' timed out after 0.05 seconds."
    )


async def test_max_turns_carries_the_evidence() -> None:
    model = ScriptedModel([calls(("get_weather", {"city": "A"}))] * 5)
    with pytest.raises(MaxTurnsExceeded) as info:
        await Agent(model, tools=[get_weather], max_turns=2).run("q")
    assert len(model.requests) == 2
    evidence = info.value.messages
    validate_history(evidence)
    assert [m.role for m in evidence] == ["user", "assistant", "user", "assistant"]
    assert evidence[-1].tool_calls  # pending: `run(None, history=...)` picks up from here
    assert info.value.usage == Usage(
        input_tokens=20, output_tokens=10, thinking_tokens=6, requests=2
    )


async def test_usage_limits() -> None:
    model = ScriptedModel([calls(("get_weather", {"city": "A"})), answer()])
    agent = Agent(model, tools=[get_weather], usage_limits=UsageLimits(thinking_tokens=4))
    with pytest.raises(UsageLimitExceeded, match="6 thinking_tokens, over its limit of 4") as info:
        await agent.run("q")
    assert len(info.value.messages) == 4


async def test_invalid_history_is_rejected_before_any_request() -> None:
    model = ScriptedModel([answer()])
    bad = [Message(role="user", parts=(TextPart(text="q"), ThinkingBlock.signed("t", "s")))]
    with pytest.raises(
        HistoryError, match=r"messages\[0\]\.parts\[1\]: thinking on a user message"
    ):
        await Agent(model).run("next", history=bad)
    smuggled = ThinkingBlock.model_construct(text="t", redacted="r", signature=None)
    bad2 = [Message.user("q"), Message.model_construct(role="assistant", parts=(smuggled,))]
    with pytest.raises(
        HistoryError, match=r"messages\[1\]\.parts\[0\]: .*both text and a redacted"
    ):
        await Agent(model).run("next", history=bad2)
    with pytest.raises(HistoryError):
        async with Agent(model).run_stream("next", history=bad) as stream:
            async for _ in stream:
                pass
    assert model.requests == []


async def test_resume_after_tool_results_from_persisted_json() -> None:
    overloaded = ProviderError("overloaded", scope="scripted", status=529, retryable=True)
    model = ScriptedModel([calls(("get_weather", {"city": "Paris"})), overloaded])
    with pytest.raises(ProviderError) as info:
        await Agent(model, tools=[get_weather]).run("q")
    saved = dump_messages(info.value.messages)  # user, assistant(call), user(results)
    resumed_model = ScriptedModel([answer("Sunny.")])
    result = await Agent(resumed_model, tools=[get_weather]).run(None, history=load_messages(saved))
    assert result.output == "Sunny."
    assert resumed_model.requests[0].messages == load_messages(saved)
    assert len(result.new_messages) == 1


async def test_resume_runs_pending_tool_calls_first() -> None:
    history = [Message.user("q"), calls(("get_weather", {"city": "Oslo"}))]
    model = ScriptedModel([answer("Cold.")])
    result = await Agent(model, tools=[get_weather]).run(None, history=history)
    assert result.new_messages[0].tool_results[0].content == "sunny in Oslo"
    assert result.output == "Cold."


async def test_resume_an_unanswered_user_turn() -> None:
    model = ScriptedModel([answer("Hello.")])
    result = await Agent(model).run(None, history=[Message.user("hi")])
    assert result.output == "Hello." and len(model.requests) == 1


@pytest.mark.parametrize(
    ("prompt", "history", "match"),
    [
        (None, [], "nothing to run"),
        (None, [Message.user("q"), answer()], "ends with the model's answer"),
        ("next", [Message.user("q"), calls(("get_weather", {"city": "A"}))], "no results"),
    ],
)
async def test_nothing_to_continue(prompt: str | None, history: list[Message], match: str) -> None:
    model = ScriptedModel([answer()])
    with pytest.raises(HistoryError, match=match):
        await Agent(model, tools=[get_weather]).run(prompt, history=history)
    assert model.requests == []


async def test_history_processors_shape_requests_not_evidence() -> None:
    old = [Message.user("old"), answer("old answer")]
    seen: list[int] = []

    async def count(messages: list[Message]) -> list[Message]:
        seen.append(len(messages))
        return messages

    model = ScriptedModel([calls(("get_weather", {"city": "A"})), answer()])
    agent = Agent(model, tools=[get_weather], history_processors=[trim_history(2), count])
    result = await agent.run("new", history=old)
    assert [len(r.messages) for r in model.requests] == [1, 3]
    assert model.requests[0].messages[0] == Message.user("new")
    assert seen == [1, 3]
    assert result.messages[:2] == old  # the evidence keeps everything


async def test_a_processor_that_breaks_the_history_is_caught() -> None:
    def drop_first(messages: list[Message]) -> list[Message]:
        return messages[1:]

    model = ScriptedModel([calls(("get_weather", {"city": "A"})), answer()])
    with pytest.raises(HistoryError, match="starts with a user message"):
        await Agent(model, tools=[get_weather], history_processors=[drop_first]).run("q")


async def test_cancelling_a_run_carries_evidence_and_leaves_nothing_behind() -> None:
    entered = asyncio.Event()

    async def wait_forever() -> str:
        entered.set()
        await asyncio.Event().wait()
        return "never"

    model = ScriptedModel([calls(("wait_forever", {})), answer()])
    tasks_before = asyncio.all_tasks()
    threads_before = threading.active_count()
    task = asyncio.create_task(Agent(model, tools=[wait_forever]).run("q"))
    await entered.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError) as info:
        await task
    assert task.cancelled()
    cancelled = RunCancelled.find(info.value)  # what a service does to persist the evidence
    assert cancelled is not None
    validate_history(cancelled.messages)
    assert cancelled.messages[-1].tool_calls  # the call that was running stays pending
    assert cancelled.usage.requests == 1
    await asyncio.sleep(0)
    assert asyncio.all_tasks() == tasks_before
    assert threading.active_count() == threads_before


def waiting_model() -> tuple[ScriptedModel, list[Tool]]:
    async def wait_forever() -> str:
        await asyncio.Event().wait()
        return "never"

    return ScriptedModel([calls(("wait_forever", {})), answer()]), [Tool(wait_forever)]


async def test_cancellation_propagates_asyncios_own_error_unchanged() -> None:
    """Whatever cancels the run, what comes out is the very `CancelledError` asyncio raised
    (asyncio.timeout on Python 3.11 and 3.12 checks its exact type), the evidence as its cause."""
    model, tools = waiting_model()
    raised: list[BaseException] = []

    async def run() -> None:
        try:
            await Agent(model, tools=tools).run("q")
        except BaseException as error:
            raised.append(error)
            raise

    task = asyncio.create_task(run())
    await asyncio.sleep(0.01)
    task.cancel("stop")
    with pytest.raises(asyncio.CancelledError):
        await task
    (error,) = raised
    assert type(error) is asyncio.CancelledError
    assert error.args == ("stop",)
    assert isinstance(error.__cause__, RunCancelled)
    assert RunCancelled.find(error) is error.__cause__


async def test_wait_for_raises_timeout_error_with_the_evidence() -> None:
    model, tools = waiting_model()
    with pytest.raises(asyncio.TimeoutError) as info:
        await asyncio.wait_for(Agent(model, tools=tools).run("q"), 0.05)
    cancelled = RunCancelled.find(info.value)
    assert cancelled is not None and cancelled.messages[-1].tool_calls
    validate_history(cancelled.messages)


@pytest.mark.skipif(sys.version_info < (3, 11), reason="asyncio.timeout is new in Python 3.11")
@pytest.mark.parametrize("streamed", [False, True])
async def test_asyncio_timeout_raises_timeout_error_and_leaves_the_task_uncancelled(
    streamed: bool,
) -> None:
    model, tools = waiting_model()
    agent = Agent(model, tools=tools)
    task = asyncio.current_task()
    assert task is not None
    with pytest.raises(TimeoutError) as info:
        async with asyncio.timeout(0.05):  # pyright: ignore[reportAttributeAccessIssue]
            if streamed:
                async with agent.run_stream("q") as stream:
                    async for _ in stream:
                        pass
            else:
                await agent.run("q")
    assert task.cancelling() == 0  # pyright: ignore[reportAttributeAccessIssue]
    cancelled = RunCancelled.find(info.value)
    assert cancelled is not None and cancelled.usage.requests == 1


@pytest.mark.skipif(sys.version_info < (3, 11), reason="TaskGroup is new in Python 3.11")
async def test_a_failing_sibling_in_a_task_group_cancels_the_run_as_asyncio_expects() -> None:
    model, tools = waiting_model()
    runs: list[asyncio.Task[RunResult]] = []

    async def fail() -> None:
        await asyncio.sleep(0.02)
        raise KeyError("sibling failed")

    with pytest.raises(ExceptionGroup) as info:  # noqa: F821  (Python 3.11+)
        async with asyncio.TaskGroup() as group:  # pyright: ignore[reportAttributeAccessIssue]
            runs.append(group.create_task(Agent(model, tools=tools).run("q")))
            group.create_task(fail())
    assert [type(e) for e in info.value.exceptions] == [KeyError]  # the run only cancelled
    assert runs[0].cancelled()


async def test_cancelling_a_stream_mid_response() -> None:
    gate = asyncio.Event()

    model = ScriptedModel([answer("x" * 100)], chunk_size=1)

    async def consume() -> None:
        async with Agent(model).run_stream("q") as stream:
            async for event in stream:
                if isinstance(event, TextDelta):
                    gate.set()
                    await asyncio.sleep(10)

    task = asyncio.create_task(consume())
    await gate.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert task.cancelled()


async def test_an_interrupted_stream_fails_cleanly() -> None:
    message = reply(ThinkingBlock.signed("a long thought", "sig"), TextPart(text="never seen"))
    model = ScriptedModel([ScriptedResponse(message, interrupt_after=2)], chunk_size=4)
    with pytest.raises(StreamInterrupted) as info:
        async with Agent(model).run_stream("q") as stream:
            async for _ in stream:
                pass
    partial = info.value.partial
    assert partial is not None and partial.parts == (ThinkingBlock.plain("a long t"),)
    assert info.value.messages == [Message.user("q")]  # the partial message is not evidence
    validate_history(info.value.messages)


def test_run_sync() -> None:
    result = Agent(ScriptedModel([answer("sync")])).run_sync("q")
    assert result.output == "sync"


async def test_run_sync_refuses_inside_a_loop() -> None:
    with pytest.raises(RuntimeError, match="inside an event loop"):
        Agent(ScriptedModel([answer()])).run_sync("q")


def test_agent_configuration_errors() -> None:
    with pytest.raises(ValueError, match="max_turns"):
        Agent(ScriptedModel([]), max_turns=0)
    with pytest.raises(ValueError, match="two tools are named 'get_weather'"):
        Agent(ScriptedModel([]), tools=[get_weather, Tool(get_weather)])


async def test_a_tool_raising_timeout_error_is_an_ordinary_failure() -> None:
    finished: list[str] = []

    async def fetch(url: str) -> str:
        raise TimeoutError("upstream did not answer")

    async def slow(x: int) -> int:
        await asyncio.sleep(0.01)
        finished.append("slow")
        return x

    model = ScriptedModel([calls(("fetch", {"url": "u"}), ("slow", {"x": 1})), answer()])
    result = await Agent(model, tools=[fetch, slow]).run("q")
    error, ok = result.messages[2].tool_results
    assert error.content == "Tool 'fetch' failed: TimeoutError: upstream did not answer"
    assert ok.content == 1
    assert finished == ["slow"]
    assert asyncio.all_tasks() == {asyncio.current_task()}


async def test_cancelling_parallel_tools_cancels_every_call() -> None:
    started = asyncio.Event()
    cancelled: list[str] = []

    async def wait(label: str) -> str:
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.append(label)
            raise
        return label

    model = ScriptedModel([calls(("wait", {"label": "a"}), ("wait", {"label": "b"})), answer()])
    task = asyncio.create_task(Agent(model, tools=[wait]).run("q"))
    await started.wait()
    await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert sorted(cancelled) == ["a", "b"]
    assert asyncio.all_tasks() == {asyncio.current_task()}


@pytest.mark.parametrize("prompt", ["", "  \n"])
async def test_an_empty_prompt_is_refused_before_sending(prompt: str) -> None:
    model = ScriptedModel([answer()])
    with pytest.raises(HistoryError, match=r"messages\[0\]: the prompt is empty"):
        await Agent(model).run(prompt)
    assert model.requests == []
