"""The reliability defects found in the core, each pinned by a test named after it (the
adapters' and the emulator's are in `test_wire_defects.py`)."""

from __future__ import annotations

import asyncio
import sys
import threading

import pytest

from thinkagent import (
    Agent,
    ConfigurationError,
    HistoryError,
    Message,
    RunCancelled,
    TextPart,
    ThinkingBlock,
    Tool,
    ToolCall,
    ToolError,
    ToolResult,
    ToolRetriesExceeded,
    dump_messages,
    load_messages,
    validate_history,
)
from thinkagent import tools as tools_module
from thinkagent.testing import ScriptedModel


def calls(*pairs: tuple[str, object]) -> Message:
    return Message(
        role="assistant",
        parts=tuple(
            ToolCall(id=f"c{i}", name=name, arguments=args)  # type: ignore[arg-type]
            for i, (name, args) in enumerate(pairs)
        ),
    )


def answer(text: str = "done") -> Message:
    return Message(role="assistant", parts=(TextPart(text=text),))


async def wait_forever() -> str:
    await asyncio.Event().wait()
    return "never"


# 1. asyncio.timeout() around a run raises TimeoutError, with the evidence reachable


@pytest.mark.skipif(sys.version_info < (3, 11), reason="asyncio.timeout is new in Python 3.11")
async def test_defect_1_asyncio_timeout_around_a_run_raises_timeout_error() -> None:
    model = ScriptedModel([calls(("wait_forever", {})), answer()])
    task = asyncio.current_task()
    assert task is not None
    with pytest.raises(TimeoutError) as info:
        async with asyncio.timeout(0.05):  # pyright: ignore[reportAttributeAccessIssue]
            await Agent(model, tools=[wait_forever]).run("q")
    assert task.cancelling() == 0  # pyright: ignore[reportAttributeAccessIssue]
    cancelled = RunCancelled.find(info.value)
    assert cancelled is not None
    validate_history(cancelled.messages)
    assert cancelled.messages[-1].tool_calls


async def test_defect_1_wait_for_around_a_run_raises_timeout_error() -> None:
    model = ScriptedModel([calls(("wait_forever", {})), answer()])
    with pytest.raises(asyncio.TimeoutError) as info:
        await asyncio.wait_for(Agent(model, tools=[wait_forever]).run("q"), 0.05)
    assert RunCancelled.find(info.value) is not None


# 3. Deeply nested tool-argument text never escapes the run


@pytest.mark.parametrize("streamed", [False, True])
async def test_defect_3_deeply_nested_tool_arguments_become_an_error_result(
    streamed: bool,
) -> None:
    ran: list[str] = []

    def lookup(city: str) -> str:
        ran.append(city)
        return "sunny"

    hostile = '{"city":' + "[" * 100_000 + "]" * 100_000 + "}"
    model = ScriptedModel(
        [
            Message(
                role="assistant",
                parts=(
                    ThinkingBlock.signed("Look it up.", "sig"),
                    ToolCall(id="c1", name="lookup", arguments=hostile),
                ),
            ),
            answer("Sorry."),
        ]
    )
    agent = Agent(model, tools=[lookup])
    if streamed:
        async with agent.run_stream("q") as stream:
            async for _ in stream:
                pass
        result = stream.result
    else:
        result = await agent.run("q")
    (sent,) = result.messages[2].tool_results
    assert sent.is_error and "nested too deeply" in str(sent.content)
    assert ran == []
    assert load_messages(dump_messages(result.messages)) == result.messages


# 4. Sync tools that time out never stall later sync tools (or anything else)


async def test_defect_4_timed_out_sync_tools_cannot_stall_later_calls(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    threads = tools_module.ToolThreads(2)
    monkeypatch.setattr(tools_module, "TOOL_THREADS", threads)
    release = threading.Event()

    def stuck() -> str:
        release.wait(10)
        return "late"

    def quick() -> str:
        return "quick"

    model = ScriptedModel([calls(("stuck", {}), ("stuck", {})), calls(("quick", {})), answer()])
    agent = Agent(model, tools=[Tool(stuck, timeout=0.05), quick])
    try:
        started = asyncio.get_running_loop().time()
        result = await agent.run("q")
        elapsed = asyncio.get_running_loop().time() - started
        assert threads.abandoned == 2
        (refused,) = result.messages[4].tool_results
        assert refused.is_error
        assert "all 2 threads for sync tools are still running calls that timed out" in str(
            refused.content
        )
        assert elapsed < 5  # an error at once, not a wait behind the stuck calls
        # the loop's default executor was never used: to_thread still answers at once
        assert await asyncio.wait_for(asyncio.to_thread(lambda: "free"), 1) == "free"
    finally:
        release.set()
    for _ in range(100):
        if threads.abandoned == 0:
            break
        await asyncio.sleep(0.01)
    assert threads.abandoned == 0  # the slots come back once the functions return


async def test_defect_4_the_pool_is_the_tools_own() -> None:
    names: list[str] = []

    def where() -> str:
        names.append(threading.current_thread().name)
        return "here"

    await Agent(ScriptedModel([calls(("where", {})), answer()]), tools=[where]).run("q")
    assert names[0].startswith("thinkagent-tool")


# 5. Parallel failures of one turn count as one failed turn


async def test_defect_5_parallel_failures_count_as_one_failed_turn() -> None:
    def broken(x: int) -> str:
        raise RuntimeError(f"bad {x}")

    model = ScriptedModel(
        [
            calls(("broken", {"x": 1}), ("broken", {"x": 2}), ("broken", {"x": 3})),
            answer("corrected"),
        ]
    )
    result = await Agent(model, tools=[Tool(broken, max_retries=1)]).run("q")
    assert result.output == "corrected"  # the model got its turn to correct the calls
    assert len(model.requests) == 2


async def test_defect_5_retries_still_stop_after_max_retries_failed_turns() -> None:
    def broken(x: int) -> str:
        raise RuntimeError("down")

    turn = calls(("broken", {"x": 1}), ("broken", {"x": 2}))
    model = ScriptedModel([turn, turn, turn, answer()])
    with pytest.raises(ToolRetriesExceeded, match="failed in 2 model turns in a row"):
        await Agent(model, tools=[Tool(broken, max_retries=1)]).run("q")
    assert len(model.requests) == 2


# 6. Lone surrogates in a prompt or instructions are refused before sending


async def test_defect_6_a_lone_surrogate_in_the_prompt_is_refused_before_sending() -> None:
    model = ScriptedModel([answer()])
    with pytest.raises(HistoryError, match=r"messages\[0\]: the prompt is not valid Unicode"):
        await Agent(model).run("bad \ud800 text")
    assert model.requests == []


def test_defect_6_a_lone_surrogate_in_the_instructions_is_refused() -> None:
    with pytest.raises(ConfigurationError, match="instructions are not valid Unicode"):
        Agent(ScriptedModel([]), instructions="be \udfff brief")


async def test_defect_6_a_lone_surrogate_in_the_history_is_refused_before_sending() -> None:
    history = [Message.user("fine"), answer("ok"), Message.user("bad \ud800")]
    model = ScriptedModel([answer()])
    with pytest.raises(HistoryError, match=r"messages\[2\]\.parts\[0\]: text is not valid"):
        await Agent(model).run(None, history=history)
    assert model.requests == []
    with pytest.raises(HistoryError, match=r"messages\[2\]\.parts\[0\]: text is not valid"):
        dump_messages(history)


async def test_defect_6_a_tool_result_with_a_lone_surrogate_is_mended() -> None:
    def echo() -> str:
        return "bad \ud800"

    result = await Agent(ScriptedModel([calls(("echo", {})), answer()]), tools=[echo]).run("q")
    assert result.messages[2].tool_results[0].content == "bad ?"  # utf-8 "replace" gives "?"
    assert load_messages(dump_messages(result.messages)) == result.messages


# 7. Small input gaps


@pytest.mark.parametrize(
    ("json_text", "error"),
    [
        (
            '[{"role":"user","parts":[{"kind":"tool_result","call_id":"c","name":"n",'
            '"content":NaN}]}]',
            r"messages\[0\]\.parts\[0\]: Input should be a finite number",
        ),
        (
            '[{"role":"user","parts":[{"kind":"tool_result","call_id":"c","name":"n",'
            '"content":[1,{"x":-Infinity}]}]}]',
            r"messages\[0\]\.parts\[0\]: Input should be a finite number",
        ),
        (
            '[{"role":"user","parts":[{"kind":"text","text":"q"}]},{"role":"assistant",'
            '"parts":[],"usage":{"input_tokens":-5,"output_tokens":3}}]',
            r"messages\[1\]: usage\.input_tokens: Input should be greater than or equal to 0",
        ),
        (
            '[{"role":"user","parts":[{"kind":"text","text":"q","text":"r"}]}]',
            r"messages\[0\]: the key 'text' appears twice in one object",
        ),
        (
            '[{"role":"user","parts":[{"kind":"text","text":"\\ud800"}]}]',
            r"messages\[0\]: text is not valid Unicode",
        ),
    ],
)
def test_defect_7_load_messages_refuses_what_dump_messages_never_writes(
    json_text: str, error: str
) -> None:
    with pytest.raises(HistoryError, match=error):
        load_messages(json_text)


async def test_defect_7_a_tool_returning_nan_round_trips_losslessly() -> None:
    def measure() -> list[float]:
        return [float("nan"), float("inf"), -float("inf"), 1.5]

    model = ScriptedModel([calls(("measure", {})), answer()])
    result = await Agent(model, tools=[measure]).run("q")
    assert result.messages[2].tool_results[0].content == ["NaN", "Infinity", "-Infinity", 1.5]
    assert load_messages(dump_messages(result.messages)) == result.messages


def test_defect_7_a_tool_parameter_with_a_leading_underscore_is_a_tool_error() -> None:
    def search(query: str, _cursor: str = "") -> str:
        return query

    with pytest.raises(ToolError, match="parameter '_cursor' starts with an underscore"):
        Tool(search)


def test_defect_7_a_nan_tool_result_cannot_be_built_by_hand() -> None:
    with pytest.raises(ValueError, match="finite number"):
        ToolResult(call_id="c", name="n", content=float("nan"))
