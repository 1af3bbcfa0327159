"""OpenTelemetry spans of agent runs (thinkagent[otel]), read back through the SDK's in-memory
exporter: the span tree, the GenAI conventions' names and attributes on every wire API, the
replay events, errors, content capture only on opt-in, and never a proof."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from thinkagent import (
    Agent,
    Message,
    ProviderError,
    TextPart,
    ThinkingBlock,
    ToolCall,
    WarningEvent,
)
from thinkagent.emulator import Emulator, Fault, Reply, ToolCallSpec
from thinkagent.otel import Instrumentation, instrument, uninstrument
from thinkagent.providers.anthropic import AnthropicModel, ClaudeThinking
from thinkagent.testing import ScriptedModel, ScriptedResponse

from .models import (
    GEMINI_TURN,
    PROVIDER,
    WIRES,
    get_time,
    get_weather,
    proofs_of,
    script_parallel_calls,
    wire_model,
)

REASONING = "gen_ai.usage.reasoning.output_tokens"


@pytest.fixture
def exporter() -> Iterator[InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    instrument(provider)
    yield exporter
    uninstrument()


def ours(exporter: InMemorySpanExporter) -> list[ReadableSpan]:
    return [
        s for s in exporter.get_finished_spans() if s.instrumentation_scope.name == "thinkagent"
    ]


def by_operation(spans: list[ReadableSpan], operation: str) -> list[ReadableSpan]:
    return [s for s in spans if (s.attributes or {}).get("gen_ai.operation.name") == operation]


def recorded_text(spans: list[ReadableSpan]) -> str:
    """Every attribute and event value of `spans`, as one text to search."""
    texts: list[str] = []
    for span in spans:
        texts += [str(v) for v in (span.attributes or {}).values()]
        for event in span.events:
            texts += [str(v) for v in (event.attributes or {}).values()]
    return "\n".join(texts)


@pytest.mark.parametrize("api", WIRES)
@pytest.mark.parametrize("streamed", [False, True], ids=["json", "streamed"])
async def test_a_thinking_parallel_tool_run_is_one_span_tree(
    api: str,
    streamed: bool,
    emu: Emulator,
    exporter: InMemorySpanExporter,
) -> None:
    script_parallel_calls(emu, api)
    async with wire_model(api, emu) as model:
        agent = Agent(model, tools=[get_weather, get_time], name="weather")
        if streamed:
            async with agent.run_stream("What's the weather and time in Paris?") as stream:
                async for _ in stream:
                    pass
            result = stream.result
        else:
            result = await agent.run("What's the weather and time in Paris?")
    assert [len(m.tool_calls) for m in result.new_messages if m.role == "assistant"] == [2, 0]

    spans = ours(exporter)
    [run] = by_operation(spans, "invoke_agent")
    operation = "generate_content" if api == "gemini" else "chat"
    requests = by_operation(spans, operation)
    tools = by_operation(spans, "execute_tool")
    assert len(spans) == 1 + 2 + 2
    assert len(requests) == 2 and len(tools) == 2
    assert run.name == "invoke_agent weather" and run.kind == SpanKind.INTERNAL
    assert run.parent is None
    assert run.context is not None
    for span in requests + tools:
        assert span.parent is not None and span.parent.span_id == run.context.span_id

    run_attributes = dict(run.attributes or {})
    assert run_attributes["gen_ai.agent.name"] == "weather"
    assert run_attributes["gen_ai.provider.name"] == PROVIDER[api]
    assert run_attributes["gen_ai.usage.input_tokens"] == result.usage.input_tokens
    assert run_attributes["gen_ai.usage.output_tokens"] == result.usage.output_tokens
    # every wire reports reasoning tokens but Bedrock Converse, which has no such count
    assert run_attributes.get(REASONING, 0) == result.usage.thinking_tokens
    assert api == "bedrock" or result.usage.thinking_tokens > 0

    answers = [m for m in result.new_messages if m.role == "assistant"]
    for span, message in zip(requests, answers, strict=True):
        attributes = dict(span.attributes or {})
        assert span.kind == SpanKind.CLIENT
        assert span.name == f"{operation} {model.model_name}"
        assert attributes["gen_ai.provider.name"] == PROVIDER[api]
        assert attributes["gen_ai.request.model"] == model.model_name
        assert attributes["gen_ai.response.model"] == message.model
        assert attributes["gen_ai.response.finish_reasons"] == (message.finish_reason,)
        usage = message.usage
        assert usage is not None
        assert attributes["gen_ai.usage.input_tokens"] == usage.input_tokens
        assert attributes["gen_ai.usage.output_tokens"] == usage.output_tokens
        assert attributes.get(REASONING, 0) == usage.thinking_tokens
        assert "gen_ai.input.messages" not in attributes  # content is opt-in
        if message.id is not None:
            assert attributes["gen_ai.response.id"] == message.id

    # the second request sent the first's thinking back to the scope that issued it
    replays = [
        dict(next(e for e in s.events if e.name == "thinkagent.replay").attributes or {})
        for s in requests
    ]
    assert [r["thinkagent.thinking.sent"] for r in replays] == [0, 1]
    assert all(r["thinkagent.thinking.dropped_foreign"] == 0 for r in replays)

    calls = answers[0].tool_calls
    assert sorted(
        (
            dict(s.attributes or {})["gen_ai.tool.name"],
            dict(s.attributes or {})["gen_ai.tool.call.id"],
        )
        for s in tools
    ) == sorted((call.name, call.id) for call in calls)
    for span in tools:
        assert span.name == f"execute_tool {dict(span.attributes or {})['gen_ai.tool.name']}"
        assert span.kind == SpanKind.INTERNAL
        assert span.status.status_code != StatusCode.ERROR

    secrets = proofs_of(result.messages)
    assert secrets or api == "openai"  # proofs (DeepSeek reasons in plain text): none recorded
    text = recorded_text(exporter.get_finished_spans())
    assert not [p for p in secrets if p in text]


async def test_content_is_recorded_on_opt_in_without_proofs(
    emu: Emulator, exporter: InMemorySpanExporter, anthropic_client: Any
) -> None:
    instrument(exporter_provider(exporter), capture_content=True)
    script_parallel_calls(emu, "anthropic")
    result = await Agent(
        AnthropicModel(
            "claude-sonnet-4-6", client=anthropic_client, thinking=ClaudeThinking.adaptive()
        ),
        tools=[get_weather, get_time],
        instructions="Be brief.",
    ).run("What's the weather and time in Paris?")
    spans = ours(exporter)
    first, second = by_operation(spans, "chat")
    attributes = dict(second.attributes or {})
    assert json.loads(str(attributes["gen_ai.system_instructions"])) == [
        {"type": "text", "content": "Be brief."}
    ]
    sent = json.loads(str(attributes["gen_ai.input.messages"]))
    assert [m["role"] for m in sent] == ["user", "assistant", "tool"]
    assert sent[1]["parts"][0] == {
        "type": "reasoning",
        "content": "Two things to look up, at once.",
    }
    assert {p["type"] for p in sent[2]["parts"]} == {"tool_call_response"}
    output = json.loads(str(dict(first.attributes or {})["gen_ai.output.messages"]))
    assert output[0]["finish_reason"] == "tool_call"
    assert [p["type"] for p in output[0]["parts"]] == [
        "reasoning",
        "text",
        "tool_call",
        "tool_call",
    ]
    tool = by_operation(spans, "execute_tool")[0]
    assert json.loads(str(dict(tool.attributes or {})["gen_ai.tool.call.arguments"])) == {
        "city": "Paris"
    }
    assert "gen_ai.tool.call.result" in dict(tool.attributes or {})
    secrets = proofs_of(result.messages)
    assert secrets and not [p for p in secrets if p in recorded_text(spans)]


def exporter_provider(exporter: InMemorySpanExporter) -> TracerProvider:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider


async def test_the_conventions_switch_turns_content_capture_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")
    assert Instrumentation().capture_content
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "false")
    assert not Instrumentation().capture_content
    assert Instrumentation(capture_content=True).capture_content


async def test_per_agent_switch_and_its_override() -> None:
    exporter = InMemorySpanExporter()
    answer = Message(role="assistant", parts=(TextPart(text="Hi."),))
    per_agent = Agent(
        ScriptedModel([answer]),
        instrument=Instrumentation(tracer_provider=exporter_provider(exporter)),
    )
    await per_agent.run("Hello")
    assert [s.name for s in ours(exporter)] == ["chat scripted-model", "invoke_agent"]

    exporter.clear()
    instrument(exporter_provider(exporter))
    try:
        await Agent(ScriptedModel([answer]), instrument=False).run("Hello")
        assert ours(exporter) == []
        await Agent(ScriptedModel([answer])).run("Hello")
        assert len(ours(exporter)) == 2
    finally:
        uninstrument()


async def test_replay_decisions_are_span_events(
    exporter: InMemorySpanExporter, anthropic_client: Any
) -> None:
    history = [Message.user("Hi"), GEMINI_TURN]
    client = anthropic_client
    for policy, sent_as_text, dropped in (("drop", 0, 1), ("text", 1, 0)):
        exporter.clear()
        model = AnthropicModel(
            "claude-sonnet-4-6",
            client=client,
            thinking=ClaudeThinking.adaptive(),
            foreign_reasoning=policy,
        )
        await Agent(model).run("And now?", history=history)
        [span] = by_operation(ours(exporter), "chat")
        replay = dict(
            next(e for e in span.events if e.name == "thinkagent.replay").attributes or {}
        )
        assert replay["thinkagent.thinking.sent"] == 0
        assert replay["thinkagent.thinking.dropped_foreign"] == dropped
        assert replay["thinkagent.thinking.sent_as_text"] == sent_as_text
        assert replay["thinkagent.thinking.foreign_scopes"] == ("gemini",)

    # what the provider drops, its adapter reports as a `thinking_dropped` warning
    exporter.clear()
    dropped_warning = WarningEvent(
        "thinking_dropped", "earlier turns' thinking is ignored", "scripted"
    )
    scripted = ScriptedModel(
        [
            ScriptedResponse(
                Message(role="assistant", parts=(TextPart(text="Hi."),)), warnings=[dropped_warning]
            )
        ]
    )
    await Agent(scripted).run("Hello")
    [span] = by_operation(ours(exporter), "chat")
    events = {e.name: dict(e.attributes or {}) for e in span.events}
    assert events["thinkagent.replay"]["thinkagent.thinking.dropped_by_provider"] == 1
    assert events["thinkagent.warning"] == {
        "thinkagent.warning.code": "thinking_dropped",
        "thinkagent.warning.message": "earlier turns' thinking is ignored",
    }


@pytest.mark.parametrize("streamed", [False, True], ids=["json", "streamed"])
async def test_a_failed_request_and_a_failed_tool_carry_error_type(
    streamed: bool, emu: Emulator, exporter: InMemorySpanExporter, anthropic_client: Any
) -> None:
    def broken(city: str) -> str:
        """Always fails, and the model's next request will too."""
        emu.inject(Fault.overloaded())
        raise RuntimeError("no such city")

    model = AnthropicModel(
        "claude-sonnet-4-6", client=anthropic_client, thinking=ClaudeThinking.adaptive()
    )
    emu.script(
        "anthropic",
        [Reply(thinking="Try it.", tool_calls=[ToolCallSpec("broken", {"city": "Atlantis"})])],
    )
    agent = Agent(model, tools=[broken])
    with pytest.raises(ProviderError):
        if streamed:
            async with agent.run_stream("Break it") as stream:
                async for _ in stream:
                    pass
        else:
            await agent.run("Break it")
    spans = ours(exporter)
    [run] = by_operation(spans, "invoke_agent")
    _, failed = by_operation(spans, "chat")
    [tool] = by_operation(spans, "execute_tool")
    assert dict(tool.attributes or {})["error.type"] == "RuntimeError"
    assert tool.status.status_code == StatusCode.ERROR
    assert dict(failed.attributes or {})["error.type"] == "overloaded_error"
    assert failed.status.status_code == StatusCode.ERROR
    assert dict(run.attributes or {})["error.type"] == "overloaded_error"


async def test_a_run_closed_early_is_marked_cancelled(exporter: InMemorySpanExporter) -> None:
    model = ScriptedModel(
        [Message(role="assistant", parts=(TextPart(text="A long answer " * 20),))]
    )
    async with Agent(model).run_stream("Hello") as stream:
        async for _ in stream:
            break
    spans = ours(exporter)
    [run] = by_operation(spans, "invoke_agent")
    [chat] = by_operation(spans, "chat")
    assert dict(run.attributes or {})["error.type"] == "cancelled"
    assert dict(chat.attributes or {})["error.type"] == "cancelled"


def test_nothing_of_opentelemetry_is_loaded_while_tracing_is_off() -> None:
    probe = """
import asyncio, sys
from thinkagent import Agent, Message, TextPart
from thinkagent.testing import ScriptedModel
answer = Message(role="assistant", parts=(TextPart(text="Hi."),))
asyncio.run(Agent(ScriptedModel([answer])).run("Hello"))
print(sorted(m for m in sys.modules if m.startswith(("opentelemetry", "thinkagent.otel"))))
"""
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


async def test_a_run_with_early_tools_nests_its_tool_spans(exporter: InMemorySpanExporter) -> None:
    calls = Message(
        role="assistant",
        parts=(
            ThinkingBlock.signed("Both.", "sig-of-the-scripted-model"),
            ToolCall(id="c1", name="get_weather", arguments={"city": "Paris"}),
            ToolCall(id="c2", name="get_time", arguments={"city": "Paris"}),
        ),
    )
    answer = Message(role="assistant", parts=(TextPart(text="Sunny at noon."),))
    agent = Agent(
        ScriptedModel([calls, answer]), tools=[get_weather, get_time], early_tool_start=True
    )
    async with agent.run_stream("Weather and time?") as stream:
        async for _ in stream:
            pass
    spans = ours(exporter)
    [run] = by_operation(spans, "invoke_agent")
    tools = by_operation(spans, "execute_tool")
    assert run.context is not None
    assert len(tools) == 2 and all(
        t.parent is not None and t.parent.span_id == run.context.span_id for t in tools
    )
