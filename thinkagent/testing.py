"""A scripted model for testing agents without a provider.

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
import json
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from dataclasses import dataclass

from .builtin_tools import BuiltinTool
from .errors import ConfigurationError, StreamInterrupted, ThinkAgentError
from .messages import (
    Message,
    OpaqueBlock,
    ServerToolCall,
    ServerToolResult,
    TextPart,
    ThinkingBlock,
    ToolCall,
    ToolResult,
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

__all__ = ["ScriptItem", "ScriptedModel", "ScriptedResponse", "deltas_for"]


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


ScriptItem = Message | ScriptedResponse | BaseException | Callable[[ModelRequest], "ScriptItem"]
"""A response (message), a response with stream controls, an error to raise, or a function of
the request returning one of those."""


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
