"""Streaming: the delta events models yield, and the assembler that folds them into a `Message`.

A model's stream yields `ThinkingDelta`, `TextDelta` and `ToolCallDelta` events as they arrive
and ends with the complete `ModelResponse`. `index` is the position of the part in the final
message, so deltas of interleaved parts fold into exactly the message a non-streamed call
returns. Adapters fold their vendor's events with a `StreamBuilder`, keyed by the vendor's own
part identity; `MessageAssembler` folds deltas that already carry their index.

What a model returns is kept only in a form that can be sent back and persisted (`model_text`,
`tool_arguments`): the fold applies it to every fragment, and the adapters to every
non-streamed response, so a hostile stream never puts into a history what no JSON file can hold.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Generic, cast

from pydantic import JsonValue
from typing_extensions import TypeVar

from .messages import (
    Citation,
    FinishReason,
    Message,
    OpaqueBlock,
    Part,
    ProviderDetails,
    ServerToolCall,
    ServerToolResult,
    TextPart,
    ThinkingBlock,
    ToolCall,
    ToolResult,
    Usage,
    json_object,
    valid_unicode,
)

__all__ = [
    "MessageAssembler",
    "ModelDelta",
    "PartEnd",
    "PartialOutput",
    "StreamBuilder",
    "TextDelta",
    "ThinkingDelta",
    "ToolCallDelta",
    "ToolResultEvent",
    "WarningEvent",
    "model_block",
    "model_data",
    "model_text",
    "tool_arguments",
]

OutputT = TypeVar("OutputT", default=str)


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def model_text(text: str) -> str:
    """Text a model returned, as it can be kept: a lone surrogate (which UTF-8, and so no API
    and no JSON file, can hold) becomes U+FFFD, the replacement character, as a UTF-8 decoder
    does with bytes it cannot read; the two halves of a pair sent apart are joined."""
    if valid_unicode(text):
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def tool_arguments(value: object, *, parse: bool = True) -> dict[str, JsonValue] | str:
    """A model's tool-call arguments as a `ToolCall` keeps them.

    `value` is the JSON text the model wrote, or what an SDK parsed it into. With `parse` (the
    APIs whose calls carry an object: Anthropic, Bedrock, Gemini) a JSON object of plain JSON
    values becomes a dict; anything else a model may send (a list or a number, NaN or an
    infinity, a lone surrogate, JSON that does not parse) stays its JSON text, which the agent
    answers with an error result for the model to fix and which replays as an empty object.
    Without `parse` (OpenAI, whose arguments are text) the text is kept exactly. Either way a
    lone surrogate in the text becomes its JSON escape (`\\ud800`), so the evidence stays
    whole and can be persisted.
    """
    if isinstance(value, str):
        text = value if valid_unicode(value) else _escape_surrogates(value)
        if not parse:
            return text
        if not text.strip():
            return {}
        try:
            return json_object(text)
        except ValueError:
            return text
    if isinstance(value, dict) and _plain_json(cast("dict[object, object]", value)):
        return cast("dict[str, JsonValue]", value)
    return json.dumps(value, ensure_ascii=True, default=str)  # NaN stays NaN: the evidence


def model_data(value: JsonValue) -> JsonValue:
    """JSON data a model or its API returned (a part's provider details, a provider block), as
    it can be kept: every text through `model_text`, NaN and infinities as their names
    (`"NaN"`, as a tool's result keeps them). `value` itself when it needs nothing."""
    if _plain_json(value):
        return value
    return _mended(value)


def model_block(part: Part) -> Part:
    """A provider block an API returned whole (`OpaqueBlock`, `ServerToolCall`,
    `ServerToolResult`), every text and number in it as `model_data` keeps it: the block
    itself when it needs nothing."""
    fields = part.model_dump()
    mended = model_data(fields)
    return part if mended is fields else type(part).model_validate(mended)


def _mended(value: object) -> JsonValue:
    if isinstance(value, str):
        return model_text(value)
    if isinstance(value, float) and not math.isfinite(value):
        return str(value).replace("inf", "Infinity").replace("nan", "NaN")
    if isinstance(value, list):
        return [_mended(v) for v in cast("list[object]", value)]
    if isinstance(value, dict):
        items = cast("dict[object, object]", value).items()
        return {model_text(str(k)): _mended(v) for k, v in items}
    return cast("JsonValue", value)


def _arguments_fragment(fragment: str) -> str:
    """A streamed fragment of argument JSON, its lone surrogates escaped: the halves of a pair
    split between two fragments are escaped apart and still read back as the pair."""
    return fragment if valid_unicode(fragment) else _escape_surrogates(fragment)


def _escape_surrogates(text: str) -> str:
    joined = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
    return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", joined)


def _plain_json(value: object) -> bool:
    """Whether `value` is JSON data that can be encoded as it is: finite numbers, text that is
    valid Unicode (in keys too)."""
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            if not valid_unicode(node):
                return False
        elif isinstance(node, float):
            if not math.isfinite(node):
                return False
        elif isinstance(node, dict):
            items = cast("dict[object, object]", node)
            if not all(isinstance(k, str) and valid_unicode(k) for k in items):
                return False
            stack.extend(items.values())
        elif isinstance(node, list):
            stack.extend(cast("list[object]", node))
    return True


@dataclass(frozen=True, slots=True)
class ThinkingDelta:
    """More of thinking block `index`: a text fragment, its signature, or a whole redacted payload.

    A signature or payload replaces any earlier one: providers send each whole, once.

    `id` carries a Responses reasoning item's id; `provider_details` is merged into the block's.
    """

    index: int
    text: str = ""
    signature: str | None = None
    redacted: str | None = None
    id: str | None = None
    provider_details: ProviderDetails | None = None


@dataclass(frozen=True, slots=True)
class TextDelta:
    """More of text part `index` (and its signature, on Gemini). `citations`, when not None,
    are the part's citations so far, whole (they replace any given before)."""

    index: int
    text: str = ""
    signature: str | None = None
    provider_details: ProviderDetails | None = None
    citations: tuple[Citation, ...] | None = None


@dataclass(frozen=True, slots=True)
class ToolCallDelta:
    """More of tool call `index`: id and name on its first delta, then argument JSON fragments."""

    index: int
    id: str | None = None
    name: str | None = None
    args_fragment: str = ""
    signature: str | None = None
    provider_details: ProviderDetails | None = None


ModelDelta = ThinkingDelta | TextDelta | ToolCallDelta
"""A delta a model's stream yields before its final `ModelResponse`."""


@dataclass(frozen=True, slots=True)
class PartEnd:
    """Part `index` of the streamed message is complete; `part` is what it became (a tool
    call with its whole arguments, a thinking block with its proof).

    Adapters yield it where their vendor marks the end of a part (Anthropic's
    `content_block_stop`, Bedrock's `contentBlockStop`, a Responses item's `output_item.done`,
    a Gemini part, which always arrives whole, a Chat tool call once the next one begins or the
    choice finishes), so a run can start a tool while the model still streams and a UI can close
    the block it shows. The final message holds the same part, at the same index.
    """

    index: int
    part: Part


@dataclass(frozen=True, slots=True)
class ToolResultEvent:
    """A tool finished during an agent run (results arrive in call order)."""

    result: ToolResult


@dataclass(frozen=True, slots=True)
class WarningEvent:
    """Something an adapter adjusted to send a request, said rather than done silently.

    `code` is stable (`thinking_clamped`: the thinking level was moved to one the model takes;
    `thinking_not_disabled`: the model thinks whatever is asked), `message` says it in words,
    `scope` is the endpoint it concerns. A stream yields it before the response's deltas; a
    non-streamed response carries it in `ModelResponse.warnings`; a run collects them all in
    `RunResult.warnings`.
    """

    code: str
    message: str
    scope: str | None = None


@dataclass(frozen=True, slots=True)
class PartialOutput(Generic[OutputT]):
    """The structured output so far, while its JSON streams (only runs with an `output_type`).

    Yielded each time the JSON that has arrived validates as the output type and gives a new
    value: once every required field has arrived; the last string, number or list may still be
    cut short. The final, complete value is `RunResult.output`.
    """

    output: OutputT


@dataclass(slots=True)
class _Builder:
    kind: type[Part]
    index: int
    chunks: list[str] = field(default_factory=list[str])
    signature: str | None = None
    redacted: str | None = None
    id: str | None = None
    name: str | None = None
    details: dict[str, JsonValue] | None = None
    citations: tuple[Citation, ...] = ()  # a text part's, folded in whole
    raw: dict[str, JsonValue] | None = None  # a provider block's data, as it stands
    make: Callable[[dict[str, JsonValue]], Part] | None = None  # builds the block from `raw`
    done: Part | None = None  # the part, once its end was signalled (built once)
    mended: bool = False  # text the model sent was mended: its proof no longer fits it

    def fold_text(self, text: str) -> str:
        """Keep a fragment of text as `model_text` has it; return what was kept."""
        kept = model_text(text)
        if kept is not text:
            self.mended = True
        self.chunks.append(kept)
        return kept

    def merge_details(self, details: ProviderDetails | None) -> None:
        # In place: vendors repeat the same details on every delta of a part (a Responses
        # item id), so a merge must not build a new dict each time. The part is built once,
        # after its last delta, from a validated copy.
        if details:
            if self.details is None:
                self.details = dict(details)
            else:
                self.details.update(details)


_KINDS: dict[type[ModelDelta], type[Part]] = {
    ThinkingDelta: ThinkingBlock,
    TextDelta: TextPart,
    ToolCallDelta: ToolCall,
}


_WHOLE: frozenset[type[Part]] = frozenset({OpaqueBlock, ServerToolCall, ServerToolResult})
"""The parts that keep a provider's block whole: built from the block, never from deltas."""


class MessageAssembler:
    """Folds a model's deltas into the assistant `Message` they describe.

    `json_arguments` says whether tool-call argument fragments form a JSON object to parse into
    a dict (Anthropic, Bedrock, Gemini) or text to keep exactly (OpenAI).
    """

    def __init__(self, *, json_arguments: bool = True) -> None:
        self._json_arguments = json_arguments
        self._builders: dict[int, _Builder] = {}

    def add(self, delta: ModelDelta) -> None:
        """Fold one delta in."""
        builder = self._builder(delta.index, _KINDS[type(delta)])
        builder.merge_details(delta.provider_details)
        if delta.signature is not None:
            builder.signature = delta.signature
        if isinstance(delta, ToolCallDelta):
            builder.id = delta.id or builder.id
            builder.name = delta.name or builder.name
            if delta.args_fragment:
                builder.chunks.append(_arguments_fragment(delta.args_fragment))
            return
        if delta.text:
            builder.fold_text(delta.text)
        if isinstance(delta, TextDelta) and delta.citations is not None:
            builder.citations = delta.citations
        if isinstance(delta, ThinkingDelta):
            if delta.redacted is not None:
                builder.redacted = delta.redacted
            builder.id = delta.id or builder.id

    def add_part(self, index: int, part: Part) -> PartEnd:
        """Part `index` arrived whole (a provider block: `OpaqueBlock`, `ServerToolCall`,
        `ServerToolResult`, which no delta describes): the `PartEnd` to yield for it."""
        builder = self._builder(index, type(part))
        builder.done = part
        return PartEnd(index, part)

    def _builder(self, index: int, kind: type[Part]) -> _Builder:
        builder = self._builders.get(index)
        if builder is None:
            builder = self._builders[index] = _Builder(kind, index)
        elif builder.kind is not kind:
            raise ValueError(
                f"delta for part {index} is for a {kind.__name__}, "
                f"but that part is a {builder.kind.__name__}"
            )
        return builder

    def finish_part(self, index: int) -> PartEnd | None:
        """Part `index` is complete: the `PartEnd` to yield, or None when no delta opened it
        or it holds nothing to keep. The part is built here, once, and reused by `message()`;
        no further delta may fold into it."""
        builder = self._builders.get(index)
        return None if builder is None else self._finish(builder)

    def _finish(self, builder: _Builder) -> PartEnd | None:
        if builder.done is not None:
            return PartEnd(builder.index, builder.done)
        try:
            part = self._part(builder)
        except ValueError:  # a tool call that never got its id or name
            return None
        if part is None:
            return None
        builder.done = part
        return PartEnd(builder.index, part)

    def message(
        self,
        *,
        scope: str,
        model: str,
        usage: Usage | None = None,
        finish_reason: FinishReason | None = None,
        id: str | None = None,
        provider_details: ProviderDetails | None = None,
    ) -> Message:
        """The complete message, once the stream's terminal event has arrived."""
        parts = [b.done or self._part(b) for _, b in sorted(self._builders.items())]
        return Message(
            role="assistant",
            parts=tuple(p for p in parts if p is not None),
            scope=scope,
            model=model,
            id=id,
            usage=usage,
            finish_reason=finish_reason,
            provider_details=provider_details,
        )

    def partial(self, *, scope: str, model: str) -> Message:
        """What arrived before a stream was cut off.

        The part that was still being built loses its signature (its text may be incomplete, so
        it must never be replayed as signed); thinking left with nothing to show is dropped.
        """
        if self._builders:
            last = max(self._builders)
            self._builders[last].signature = None
        parts = [self._part(b, partial=True) for _, b in sorted(self._builders.items())]
        return Message(
            role="assistant",
            parts=tuple(p for p in parts if p is not None),
            scope=scope,
            model=model,
        )

    def _part(self, b: _Builder, *, partial: bool = False) -> Part | None:
        if b.make is not None or b.kind in _WHOLE:  # kept only whole: a cut one could not go back
            if partial or b.make is None:
                return b.done
            return b.make(cast("dict[str, JsonValue]", model_data(b.raw or {})))
        text = "".join(b.chunks)
        details = None if b.details is None else cast("ProviderDetails", model_data(b.details))
        signature = None if b.mended else b.signature  # a proof of other text than is kept
        if b.kind is ThinkingBlock:
            if partial and not (text or signature or b.redacted is not None or b.id):
                return None  # nothing arrived that could be shown or replayed
            return ThinkingBlock(
                text=text,
                signature=signature,
                redacted=b.redacted,
                id=b.id,
                provider_details=details,
            )
        if b.kind is TextPart:
            return TextPart(
                text=text, signature=signature, citations=b.citations, provider_details=details
            )
        if b.id is None or b.name is None:
            if partial:
                return None
            raise ValueError("a streamed tool call ended without an id or a name")
        return ToolCall(
            id=model_text(b.id),
            name=model_text(b.name),
            arguments=tool_arguments(text, parse=self._json_arguments),
            signature=b.signature,
            provider_details=details,
        )


class StreamBuilder(MessageAssembler):
    """The parts of one streamed message, keyed by the vendor's own identity for each part.

    An adapter's `stream()` calls `thinking`, `text` or `tool_call` with the key its vendor
    gives the part an event belongs to (Anthropic's block index, a Responses item's output
    index and content position, a Chat tool call's index...). The first event of a key opens
    its part at the next position in the message; each call folds the event in and returns the
    delta to yield, or None when the event carried nothing to show yet (a part opened empty, an
    item's id): the part is still kept at its position. `message()` and `partial()` then build
    the message exactly as `MessageAssembler` does from the same deltas.
    """

    def __init__(self, *, json_arguments: bool) -> None:
        super().__init__(json_arguments=json_arguments)
        self._keys: dict[Hashable, _Builder] = {}

    def _open(self, key: Hashable, kind: type[Part]) -> _Builder:
        builder = self._keys.get(key)
        if builder is None:
            index = len(self._builders)
            builder = self._keys[key] = self._builders[index] = _Builder(kind, index)
        elif builder.kind is not kind:
            raise ValueError(f"part {key!r} is a {builder.kind.__name__}, not a {kind.__name__}")
        return builder

    def opened(self, key: Hashable) -> bool:
        """Whether an event has opened the part `key` names."""
        return key in self._keys

    def thinking(
        self,
        key: Hashable,
        text: str = "",
        *,
        signature: str | None = None,
        redacted: str | None = None,
        id: str | None = None,
        details: ProviderDetails | None = None,
    ) -> ThinkingDelta | None:
        """Fold reasoning text, its signature, a redacted payload or an item id into part `key`."""
        builder = self._open(key, ThinkingBlock)
        if details:
            builder.merge_details(details)
        if id is not None:
            builder.id = id
        if text:
            text = builder.fold_text(text)
        elif signature is None and redacted is None:
            return None
        if signature is not None:
            builder.signature = signature
        if redacted is not None:
            builder.redacted = redacted
        return ThinkingDelta(builder.index, text, signature, redacted, id, details)

    def text(
        self,
        key: Hashable,
        text: str = "",
        *,
        signature: str | None = None,
        details: ProviderDetails | None = None,
        citations: tuple[Citation, ...] | None = None,
    ) -> TextDelta | None:
        """Fold visible text (and its signature, on Gemini) into part `key`; `citations`, when
        given, are the part's whole citations so far."""
        builder = self._open(key, TextPart)
        if details:
            builder.merge_details(details)
        if citations is not None:
            builder.citations = citations
        if text:
            text = builder.fold_text(text)
        elif signature is None and citations is None:
            return None
        if signature is not None:
            builder.signature = signature
        return TextDelta(builder.index, text, signature, details, citations)

    def tool_call(
        self,
        key: Hashable,
        *,
        id: str | None = None,
        name: str | None = None,
        arguments: str = "",
        signature: str | None = None,
        details: ProviderDetails | None = None,
    ) -> ToolCallDelta | None:
        """Fold a tool call's id and name, or a fragment of its argument JSON, into part `key`."""
        builder = self._open(key, ToolCall)
        if details:
            builder.merge_details(details)
        if id:
            builder.id = id
        if name:
            builder.name = name
        if arguments:
            arguments = _arguments_fragment(arguments)
            builder.chunks.append(arguments)
        if signature is not None:
            builder.signature = signature
        if not (id or name or arguments or signature is not None):
            return None
        return ToolCallDelta(builder.index, id, name, arguments, signature, details)

    def replace_arguments(self, key: Hashable, arguments: str) -> None:
        """Replace the argument text of tool call `key` (a vendor that restates a call's whole
        arguments after streaming them in pieces it could not keep in order)."""
        builder = self._keys.get(key)
        if builder is not None and builder.kind is ToolCall:
            builder.chunks = [arguments]

    def opaque(self, key: Hashable, data: dict[str, JsonValue]) -> None:
        """Open part `key` as a provider block kept whole (`OpaqueBlock`), or replace what it
        holds so far with `data`: the adapter folds the vendor's events into the block itself.
        It is yielded by no delta; `end(key)` gives its `PartEnd`, and a stream cut before that
        leaves it out of the partial message."""
        self.block(key, data, OpaqueBlock, OpaqueBlock.of)

    def block(
        self,
        key: Hashable,
        data: dict[str, JsonValue],
        kind: type[Part],
        make: Callable[[dict[str, JsonValue]], Part],
    ) -> None:
        """Open part `key` as a provider block of `kind` (an `OpaqueBlock`, a `ServerToolCall`,
        a `ServerToolResult`), or replace what it holds so far with `data`; `make` builds the
        part from the block once it is complete. Like `opaque`: no delta, `end(key)` gives its
        `PartEnd`, and a stream cut before that leaves it out."""
        builder = self._open(key, kind)
        builder.raw = data
        builder.make = make

    def whole(self, key: Hashable, part: Part) -> PartEnd:
        """Part `key` arrived whole (a provider block the vendor sends in one event): it takes
        the next position and is complete at once; the `PartEnd` to yield."""
        part = model_block(part)
        builder = self._open(key, type(part))
        builder.done = part
        return PartEnd(builder.index, part)

    def end(self, key: Hashable) -> PartEnd | None:
        """Part `key` is complete (the vendor said so): the `PartEnd` to yield, or None when
        no such part was opened or it holds nothing to keep (no further event may fold into
        it: the part is built here, once, and reused by `message()`)."""
        builder = self._keys.get(key)
        return None if builder is None else self._finish(builder)
