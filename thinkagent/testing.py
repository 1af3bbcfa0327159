"""A test kit for agents: a scripted model, a model that calls every tool (`TestModel`), a
switch that blocks real model requests, and a way to capture the requests sent. The pytest
plugin (`thinkagent.pytest_plugin`, registered when thinkagent is installed) gives fixtures on
top of them; see `docs/testing.md`.

```python
model = ScriptedModel([
    Message(role="assistant", parts=(ThinkingBlock.signed("I should look it up.", "sig"),
                                     ToolCall(id="c1", name="lookup", arguments={"q": "x"}))),
    Message(role="assistant", parts=(TextPart(text="Found it."),)),
])
result = await Agent(model, tools=[lookup]).run("find x")
assert len(model.requests) == 2
```
Streamed, it derives deltas from each scripted message (or plays the ones you give), yields a
`PartEnd` after the last delta of each part, and ends with the message the deltas assemble
into, exactly as a real adapter does.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import json
from collections.abc import AsyncIterator, Callable, Generator, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, cast, get_args

from . import _endpoint, _telemetry
from ._endpoint import ModelRequestsBlocked
from ._telemetry import CapturedRequest
from .builtin_tools import BuiltinTool
from .errors import ConfigurationError, StreamInterrupted, ThinkAgentError
from .messages import (
    FinishReason,
    Message,
    OpaqueBlock,
    Part,
    ServerToolCall,
    ServerToolResult,
    TextPart,
    ThinkingBlock,
    ToolCall,
    ToolResult,
    Usage,
)
from .providers.base import (
    MediaSupport,
    ModelProfile,
    ModelRequest,
    ModelResponse,
    ModelStreamEvent,
)
from .stream import (
    MessageAssembler,
    ModelDelta,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    WarningEvent,
)

__all__ = [
    "CapturedRequest",
    "ModelRequestsBlocked",
    "ScriptItem",
    "ScriptedModel",
    "ScriptedResponse",
    "TestModel",
    "ThinkingShape",
    "block_model_requests",
    "capture_model_requests",
    "deltas_for",
    "schema_value",
]


@dataclass(frozen=True, slots=True)
class ScriptedResponse:
    """One scripted response, with control over how it streams.

    `deltas` replaces the deltas derived from `message`; `interrupt_after` cuts the stream
    after that many deltas (it then raises `StreamInterrupted`, as a dropped connection does).
    `warnings` are returned with the response, and streamed before its deltas, as an adapter
    does with what it adjusted (a clamped thinking level).
    """

    message: Message
    deltas: Sequence[ModelDelta] | None = None
    interrupt_after: int | None = None
    warnings: Sequence[WarningEvent] = ()


ScriptItem = (
    str | Message | ScriptedResponse | BaseException | Callable[[ModelRequest], "ScriptItem"]
)
"""A response (a message, or a string: a text answer), a response with stream controls, an
error to raise, or a function of the request returning one of those."""


class ScriptedModel:
    """A `Model` that answers from a script and records every request it receives.

    Messages without provenance are tagged with this model's `scope` and `model_name`.
    `profile` is what it declares it can do: by default any media and no native structured
    output (so an agent with an `output_type` uses its output tool; pass
    `ModelProfile(native_output=True, ...)` to test the native path). It takes every built-in
    tool (they reach it in `ModelRequest.builtin_tools`): script the `ServerToolCall` and
    `ServerToolResult` parts a provider would return.
    """

    def __init__(
        self,
        script: Iterable[ScriptItem],
        *,
        model_name: str = "scripted-model",
        scope: str = "scripted",
        chunk_size: int = 8,
        profile: ModelProfile | None = None,
    ) -> None:
        self._script = list(script)
        self._model_name = model_name
        self._scope = scope
        self._chunk_size = chunk_size
        self.profile = profile or ModelProfile(media=MediaSupport.everything())
        self.requests: list[ModelRequest] = []

    @property
    def model_name(self) -> str:
        return self._model_name

    @property
    def scope(self) -> str:
        return self._scope

    def check_builtin_tools(self, tools: Sequence[BuiltinTool]) -> None:
        """A scripted model takes any built-in tool."""

    @property
    def remaining(self) -> int:
        """How many scripted responses have not been used yet."""
        return len(self._script)

    async def request(self, request: ModelRequest) -> ModelResponse:
        scripted = self._next(request)
        return ModelResponse(scripted.message, tuple(scripted.warnings))

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelStreamEvent]:
        scripted = self._next(request)
        message = scripted.message
        deltas = scripted.deltas
        if deltas is None:
            deltas = deltas_for(message, self._chunk_size)
        json_arguments = not any(isinstance(c.arguments, str) for c in message.tool_calls)
        assembler = MessageAssembler(json_arguments=json_arguments)
        cut = scripted.interrupt_after
        last = {delta.index: n for n, delta in enumerate(deltas)}  # each part's last delta
        whole = [(i, p) for i, p in enumerate(message.parts) if isinstance(p, _WHOLE)]
        for warning in scripted.warnings:
            yield warning
        for n, delta in enumerate(deltas):
            if n == cut:
                break
            while whole and whole[0][0] < delta.index:  # a provider block, before this part
                yield assembler.add_part(*whole.pop(0))
            assembler.add(delta)
            await asyncio.sleep(0)  # a real stream yields to the loop between events
            yield delta
            if last[delta.index] == n and (end := assembler.finish_part(delta.index)):
                yield end
        if cut is None:
            for index, part in whole:
                yield assembler.add_part(index, part)
        else:
            raise StreamInterrupted(
                "scripted stream interrupted",
                scope=self._scope,
                partial=assembler.partial(scope=self._scope, model=self._model_name),
            )
        yield ModelResponse(
            assembler.message(
                scope=message.scope or self._scope,
                model=message.model or self._model_name,
                usage=message.usage,
                finish_reason=message.finish_reason,
                id=message.id,
                provider_details=message.provider_details,
            ),
            tuple(scripted.warnings),
        )

    def _next(self, request: ModelRequest) -> ScriptedResponse:
        self.requests.append(request)
        if not self._script:
            raise ThinkAgentError(
                f"ScriptedModel has no response left for request #{len(self.requests)}"
            )
        item: ScriptItem = self._script.pop(0)
        while callable(item) and not isinstance(item, BaseException):
            item = item(request)
        if isinstance(item, BaseException):
            raise item
        if isinstance(item, str):
            item = Message(role="assistant", parts=(TextPart(text=item),))
        scripted = item if isinstance(item, ScriptedResponse) else ScriptedResponse(item)
        message = scripted.message
        if message.role != "assistant" or message.tool_results:
            raise ConfigurationError("a scripted response must be an assistant message")
        if message.scope is None or message.model is None:
            message = message.model_copy(
                update={
                    "scope": message.scope or self._scope,
                    "model": message.model or self._model_name,
                }
            )
        return ScriptedResponse(
            message, scripted.deltas, scripted.interrupt_after, scripted.warnings
        )


_WHOLE = (OpaqueBlock, ServerToolCall, ServerToolResult)


def deltas_for(message: Message, chunk_size: int = 8) -> list[ModelDelta]:
    """The deltas a provider would stream for `message`: text in chunks, proofs last. Provider
    blocks (`OpaqueBlock`, `ServerToolCall`, `ServerToolResult`) have none: they stream whole,
    as their `PartEnd`."""

    def chunks(text: str) -> list[str]:
        return [text[i : i + chunk_size] for i in range(0, len(text), chunk_size)] or [""]

    deltas: list[ModelDelta] = []
    for i, part in enumerate(message.parts):
        if isinstance(part, ThinkingBlock):
            if part.redacted is not None:
                deltas.append(
                    ThinkingDelta(
                        i,
                        redacted=part.redacted,
                        id=part.id,
                        provider_details=part.provider_details,
                    )
                )
                continue
            pieces = chunks(part.text)
            deltas.append(
                ThinkingDelta(i, text=pieces[0], id=part.id, provider_details=part.provider_details)
            )
            deltas.extend(ThinkingDelta(i, text=piece) for piece in pieces[1:])
            if part.signature is not None:
                deltas.append(ThinkingDelta(i, signature=part.signature))
        elif isinstance(part, TextPart):
            pieces = chunks(part.text)
            deltas.append(TextDelta(i, text=pieces[0], provider_details=part.provider_details))
            deltas.extend(TextDelta(i, text=piece) for piece in pieces[1:])
            if part.signature is not None:
                deltas.append(TextDelta(i, signature=part.signature))
            if part.citations:
                deltas.append(TextDelta(i, citations=part.citations))
        elif isinstance(part, ToolCall):
            arguments = (
                part.arguments
                if isinstance(part.arguments, str)
                else json.dumps(part.arguments, ensure_ascii=False)
            )
            deltas.append(
                ToolCallDelta(
                    i,
                    id=part.id,
                    name=part.name,
                    signature=part.signature,
                    provider_details=part.provider_details,
                )
            )
            deltas.extend(ToolCallDelta(i, args_fragment=piece) for piece in chunks(arguments))
        elif isinstance(part, ToolResult):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise ConfigurationError("an assistant message cannot carry tool results")
    return deltas


# --- TestModel: a model that calls every tool, then answers ------------------------------------

ThinkingShape = Literal[
    "anthropic", "bedrock", "gemini", "vertex", "openai", "openai-responses", "deepseek", "none"
]
"""How a `TestModel` thinks: in the shape the adapter of that scope gives its thinking."""

_SHAPES: tuple[str, ...] = get_args(ThinkingShape)


class TestModel(ScriptedModel):
    """A model for users' tests: the first request calls every tool it is offered (the output
    tool excepted) with arguments valid for the tool's JSON schema, in parallel; once the results
    are back it answers: with the output tool's call or JSON valid for the native output
    schema when the run asks for structured output, else with `output_text` (by default the
    tool results as JSON, or `"success (no tool calls)"`).

    Each response thinks first in the shape of `thinking` (a scope's shape, `"none"` for no
    thinking): a signed block on `anthropic` and `bedrock` (a base64 signature), an unsigned
    thought summary with the thought signature on the first call or the answer on `gemini`
    and `vertex`, a reasoning item (`rs_` id, encrypted content as its signature) on
    `openai-responses`, plain `reasoning_content` text on `deepseek`, nothing on `openai`
    (Chat Completions shows no reasoning). The proofs are deterministic stand-ins: no service
    accepts them. Messages are tagged with `scope` (by default `test-<thinking>`, a scope no
    adapter replays natively).

    `call_tools` limits the tools called (their names). Every request is in `requests`.

    ```python
    with agent.override(model=TestModel()):
        result = await agent.run("What's the weather in Paris?")
    ```
    """

    __test__ = False  # not a test class, whatever pytest's name rule says

    def __init__(
        self,
        *,
        call_tools: Sequence[str] | Literal["all"] = "all",
        output_text: str | None = None,
        thinking: ThinkingShape = "anthropic",
        scope: str | None = None,
        model_name: str = "test-model",
        profile: ModelProfile | None = None,
        chunk_size: int = 8,
    ) -> None:
        if thinking not in _SHAPES:
            raise ConfigurationError(f"thinking must be one of {', '.join(_SHAPES)}")
        super().__init__(
            (),
            model_name=model_name,
            scope=scope or f"test-{thinking}",
            chunk_size=chunk_size,
            profile=profile or ModelProfile(native_output=True, media=MediaSupport.everything()),
        )
        self.call_tools = call_tools
        self.output_text = output_text
        self.thinking = thinking
        self._calls = 0

    @property
    def remaining(self) -> int:
        """A `TestModel` never runs out."""
        return 1

    def _next(self, request: ModelRequest) -> ScriptedResponse:
        self.requests.append(request)
        turn = len(self.requests)
        output = request.output
        output_tool = output.name if output is not None and output.mode == "tool" else None
        last = request.messages[-1] if request.messages else None
        results = last.tool_results if last is not None and last.role == "user" else []
        parts: list[Part] = []
        thought = self._thought(turn)
        if thought is not None:
            parts.append(thought)
        calls: list[ToolCall] = []
        if not results:
            calls = [
                self._call(tool.name, tool.parameters)
                for tool in request.tools
                if tool.name != output_tool
                and (self.call_tools == "all" or tool.name in self.call_tools)
            ]
        if not calls and output_tool is not None and output is not None:
            calls = [self._call(output_tool, output.schema)]
        if calls:
            parts.extend(calls)
            finish: FinishReason = "tool_call"
        else:
            if output is not None and output.mode == "native":
                text = json.dumps(schema_value(output.schema), ensure_ascii=False)
            elif self.output_text is not None:
                text = self.output_text
            elif results:
                text = json.dumps(
                    {result.name: result.content for result in results}, ensure_ascii=False
                )
            else:
                text = "success (no tool calls)"
            parts.append(TextPart(text=text))
            finish = "stop"
        parts = self._signed(parts, turn)
        usage = Usage(
            input_tokens=50 + sum(len(m.parts) for m in request.messages),
            output_tokens=10 * len(parts),
            thinking_tokens=5 if thought is not None else 0,
        )
        message = Message(
            role="assistant",
            parts=tuple(parts),
            scope=self.scope,
            model=self.model_name,
            id=f"test-response-{turn}",
            usage=usage,
            finish_reason=finish,
        )
        return ScriptedResponse(message)

    def _call(self, name: str, schema: Mapping[str, Any]) -> ToolCall:
        self._calls += 1
        arguments = schema_value(schema)
        if not isinstance(arguments, dict):
            arguments = {}
        return ToolCall(
            id=f"call_{self._calls}", name=name, arguments=cast("dict[str, Any]", arguments)
        )

    def _thought(self, turn: int) -> ThinkingBlock | None:
        shape = self.thinking
        text = f"Thinking about step {turn}: I will use what the tools give me."
        if shape in ("none", "openai"):
            return None
        if shape in ("anthropic", "bedrock"):
            return ThinkingBlock.signed(text, _proof(self.scope, text))
        if shape == "openai-responses":
            return ThinkingBlock(
                text=text,
                signature="gAAAAB" + _proof(self.scope, text),
                id=f"rs_test{turn:04d}",
            )
        return ThinkingBlock.plain(text)  # gemini, vertex: the signature rides on a part after

    def _signed(self, parts: list[Part], turn: int) -> list[Part]:
        """Gemini's shape: the thought signature on the first call, else on the answer."""
        if self.thinking not in ("gemini", "vertex"):
            return parts
        for i, part in enumerate(parts):
            if isinstance(part, ToolCall | TextPart):
                proof = _proof(self.scope, f"{turn}:{i}")
                parts[i] = part.model_copy(update={"signature": proof})
                break
        return parts


def _proof(scope: str, text: str) -> str:
    """A deterministic stand-in proof: base64, as the real ones are stored."""
    digest = hashlib.sha256(f"{scope}\0{text}".encode()).digest()
    return base64.b64encode(digest * 2).decode()


def schema_value(schema: Mapping[str, Any]) -> Any:
    """A value valid for a JSON schema (the subset tool and output schemas use): each required
    property filled by its type, the first enum or `const`, `$ref`s into `$defs` followed, the
    first branch of `anyOf`/`oneOf`, `allOf` merged, bounds (`minimum`, `minLength`,
    `minItems`...) and common string formats (`date`, `date-time`, `email`, `uri`, `uuid`)
    honoured."""
    return _value(schema, schema.get("$defs") or schema.get("definitions") or {}, 0)


_FORMATS = {
    "date": "2025-01-01",
    "date-time": "2025-01-01T00:00:00Z",
    "time": "00:00:00",
    "email": "user@example.com",
    "uri": "https://example.com",
    "url": "https://example.com",
    "uuid": "00000000-0000-4000-8000-000000000000",
    "ipv4": "127.0.0.1",
}


def _value(schema: Mapping[str, Any], defs: Mapping[str, Any], depth: int) -> Any:
    if depth > 20:
        return None
    ref = schema.get("$ref")
    if isinstance(ref, str):
        target = defs.get(ref.rsplit("/", 1)[-1], {})
        return _value(target, defs, depth + 1)
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    if "default" in schema:
        return schema["default"]
    for key in ("anyOf", "oneOf"):
        branches = schema.get(key)
        if branches:
            chosen = next((b for b in branches if b.get("type") != "null"), branches[0])
            return _value(chosen, defs, depth + 1)
    if schema.get("allOf"):
        merged: dict[str, Any] = {}
        for branch in schema["allOf"]:
            merged.update(branch)
        return _value(merged, defs, depth + 1)
    kind = schema.get("type")
    if isinstance(kind, list):
        kinds = cast("list[str]", kind)
        kind = next((k for k in kinds if k != "null"), "null")
    if kind == "object" or (kind is None and "properties" in schema):
        properties: Mapping[str, Any] = schema.get("properties") or {}
        required = schema.get("required") or list(properties)
        return {
            name: _value(properties.get(name, {}), defs, depth + 1)
            for name in required
            if name in properties
        }
    if kind == "array":
        items: Mapping[str, Any] = schema.get("items") or {}
        count = max(1, int(schema.get("minItems", 1)))
        if schema.get("prefixItems"):
            return [_value(item, defs, depth + 1) for item in schema["prefixItems"]]
        return [_value(items, defs, depth + 1) for _ in range(count)]
    if kind == "string":
        text = _FORMATS.get(schema.get("format", ""), "a")
        length = int(schema.get("minLength", 0))
        return text + "a" * max(0, length - len(text))
    if kind in ("integer", "number"):
        low = schema.get("minimum", schema.get("exclusiveMinimum"))
        value: float = 0 if low is None else low + (1 if "exclusiveMinimum" in schema else 0)
        high = schema.get("maximum")
        if high is not None and value > high:
            value = high
        return int(value) if kind == "integer" else float(value)
    if kind == "boolean":
        return False
    if kind == "null":
        return None
    return "a"


# --- blocking real model requests, capturing the requests sent ----------------------------------


class block_model_requests:  # lower case: used like a function and a `with`
    """Block every run's requests to a real provider (a model whose client points anywhere but
    this machine): such a run raises `ModelRequestsBlocked` before anything is sent, naming
    the host. `TestModel`, `ScriptedModel`, your own models without a client and the emulator
    are not affected.

    Takes effect at once (`block_model_requests()` in a `conftest.py`) and, used in a `with`,
    is undone when the block ends; `block_model_requests(False)` allows them again. The
    environment variable `THINKAGENT_BLOCK_MODEL_REQUESTS=1` sets it for a whole process, and
    the pytest plugin for every test (`thinkagent_block_model_requests = true` in the pytest
    configuration; a test marked `@pytest.mark.allow_model_requests` is let through).
    """

    def __init__(self, block: bool = True) -> None:
        self._before = _endpoint.blocked
        _endpoint.blocked = block

    def __enter__(self) -> None:
        return None

    def __exit__(self, *_: object) -> None:
        _endpoint.blocked = self._before


@contextlib.contextmanager
def capture_model_requests() -> Generator[list[CapturedRequest]]:
    """Record every request an agent sends to its model while the block runs (in this context
    and the tasks it starts), whichever model it is, as `CapturedRequest(model, request)`:
    the messages, tools, instructions and settings, before the adapter turns them into its
    wire format.

    ```python
    with capture_model_requests() as sent:
        await agent.run("What's the weather in Paris?")
    assert sent[0].request.settings == {"max_tokens": 1024}
    ```
    """
    captured: list[CapturedRequest] = []
    token = _telemetry.captured_requests.set(captured)
    try:
        yield captured
    finally:
        _telemetry.captured_requests.reset(token)
