"""OpenTelemetry completeness (issue 25): the GenAI client metrics, where a request goes
(`server.address`, `server.port`), the conversation id, the tool definitions on opt-in, the
request's effective `max_tokens`, and every name checked against the semantic conventions
(`opentelemetry-semantic-conventions`)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import HistogramDataPoint, InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.semconv._incubating.attributes import (
    error_attributes,
    gen_ai_attributes,
    server_attributes,
)
from opentelemetry.semconv._incubating.metrics import gen_ai_metrics

from thinkagent import Agent, ProviderError
from thinkagent.emulator import Emulator, Fault
from thinkagent.otel import Instrumentation
from thinkagent.providers.anthropic import AnthropicModel, ClaudeThinking

from .models import get_weather

KNOWN_ATTRIBUTES = {
    value
    for module in (gen_ai_attributes, server_attributes, error_attributes)
    for name, value in vars(module).items()
    if name.isupper() and isinstance(value, str)
}
KNOWN_METRICS = {value for name, value in vars(gen_ai_metrics).items() if name.isupper()}


class Telemetry:
    """Spans and metrics read back from the SDK's in-memory exporter and reader."""

    def __init__(self) -> None:
        self.spans = InMemorySpanExporter()
        self.tracer_provider = TracerProvider()
        self.tracer_provider.add_span_processor(SimpleSpanProcessor(self.spans))
        self.reader = InMemoryMetricReader()
        self.meter_provider = MeterProvider(metric_readers=[self.reader])

    def __getitem__(self, index: int) -> Any:  # (spans, reader)
        return (self.spans, self.reader)[index]


@pytest.fixture
def telemetry() -> Iterator[Telemetry]:
    found = Telemetry()
    yield found
    found.tracer_provider.shutdown()
    found.meter_provider.shutdown()


def instrumentation(telemetry: Telemetry, **options: Any) -> Instrumentation:
    return Instrumentation(
        tracer_provider=telemetry.tracer_provider,
        meter_provider=telemetry.meter_provider,
        **options,
    )


def points(reader: InMemoryMetricReader) -> dict[str, list[HistogramDataPoint]]:
    data = reader.get_metrics_data()
    found: dict[str, list[HistogramDataPoint]] = {}
    assert data is not None
    for resource in data.resource_metrics:
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                found.setdefault(metric.name, []).extend(metric.data.data_points)  # type: ignore[arg-type]
    return found


def claude(client: Any, **options: Any) -> AnthropicModel:
    return AnthropicModel(
        "claude-sonnet-4-6", client=client, thinking=ClaudeThinking.adaptive(), **options
    )


async def test_each_request_is_measured_as_the_conventions_define(
    telemetry: Telemetry,
    anthropic_client: Any,
    emu: Emulator,
) -> None:
    agent = Agent(
        claude(anthropic_client), tools=[get_weather], instrument=instrumentation(telemetry)
    )
    result = await agent.run("What's the weather in Paris?")
    found = points(telemetry[1])
    assert set(found) == {"gen_ai.client.operation.duration", "gen_ai.client.token.usage"}
    durations = found["gen_ai.client.operation.duration"]
    assert sum(p.count for p in durations) == 2 and all(p.sum > 0 for p in durations)
    tokens = {p.attributes["gen_ai.token.type"]: p.sum for p in found["gen_ai.client.token.usage"]}  # type: ignore[index]
    assert tokens == {"input": result.usage.input_tokens, "output": result.usage.output_tokens}
    port = int(emu.url.rsplit(":", 1)[1])
    for point in durations:
        attributes = dict(point.attributes or {})
        assert attributes["gen_ai.operation.name"] == "chat"
        assert attributes["gen_ai.provider.name"] == "anthropic"
        assert attributes["gen_ai.request.model"] == "claude-sonnet-4-6"
        assert attributes["gen_ai.response.model"] == "claude-sonnet-4-6"
        assert (attributes["server.address"], attributes["server.port"]) == ("127.0.0.1", port)


async def test_a_failed_request_is_measured_with_its_error_type(
    telemetry: Telemetry,
    anthropic_client: Any,
    emu: Emulator,
) -> None:
    emu.inject(Fault.overloaded(api="anthropic"))
    agent = Agent(claude(anthropic_client), instrument=instrumentation(telemetry))
    with pytest.raises(ProviderError):
        await agent.run("Hello.")
    (point,) = points(telemetry[1])["gen_ai.client.operation.duration"]
    assert point.attributes is not None and point.attributes["error.type"] == "overloaded_error"
    assert "gen_ai.client.token.usage" not in points(telemetry[1])


async def test_server_conversation_max_tokens_and_tool_definitions_on_the_spans(
    telemetry: Telemetry,
    anthropic_client: Any,
    emu: Emulator,
) -> None:
    model = claude(anthropic_client, max_tokens=4096)
    agent = Agent(
        model, tools=[get_weather], instrument=instrumentation(telemetry, tool_definitions=True)
    )
    async with agent.run_stream(
        "What's the weather in Paris?", conversation_id="conv-42"
    ) as stream:
        async for _ in stream:
            pass
    spans = telemetry[0].get_finished_spans()
    (run,) = [s for s in spans if s.name == "invoke_agent"]
    requests = [s for s in spans if s.name.startswith("chat ")]
    assert run.attributes is not None and run.attributes["gen_ai.conversation.id"] == "conv-42"
    assert len(requests) == 2
    for span in requests:
        attributes = dict(span.attributes or {})
        assert attributes["gen_ai.conversation.id"] == "conv-42"
        assert attributes["gen_ai.request.max_tokens"] == 4096  # the model's own default
        assert attributes["server.address"] == "127.0.0.1"
        (definition,) = json.loads(str(attributes["gen_ai.tool.definitions"]))
        assert definition["name"] == "get_weather" and definition["type"] == "function"
        assert definition["parameters"]["properties"]["city"]["type"] == "string"
    again = Agent(model, instrument=instrumentation(telemetry), model_settings={"max_tokens": 77})
    await again.run("Hello.")
    last = [s for s in telemetry[0].get_finished_spans() if s.name.startswith("chat ")][-1]
    assert last.attributes is not None and last.attributes["gen_ai.request.max_tokens"] == 77
    assert "gen_ai.tool.definitions" not in last.attributes  # opt-in only


async def test_span_and_metric_names_are_the_genai_conventions(
    telemetry: Telemetry, anthropic_client: Any
) -> None:
    agent = Agent(
        claude(anthropic_client),
        tools=[get_weather],
        name="weather",
        instrument=instrumentation(telemetry, tool_definitions=True, capture_content=True),
    )
    await agent.run(
        "What's the weather in Paris?", conversation_id="c", model_settings={"temperature": 0.5}
    )
    spans: list[ReadableSpan] = list(telemetry[0].get_finished_spans())
    names = {s.name for s in spans}
    assert names == {"invoke_agent weather", "chat claude-sonnet-4-6", "execute_tool get_weather"}
    used = {
        key
        for span in spans
        for key in (span.attributes or {})
        if not key.startswith("thinkagent.")
    }
    metric_points = points(telemetry[1])
    used |= {key for pts in metric_points.values() for p in pts for key in (p.attributes or {})}
    assert used - KNOWN_ATTRIBUTES == set()  # every name is one the conventions define
    assert set(metric_points) <= KNOWN_METRICS
    assert {
        "gen_ai.conversation.id",
        "gen_ai.tool.definitions",
        "gen_ai.request.max_tokens",
        "gen_ai.token.type",
        "server.address",
        "server.port",
    } <= used
