"""The shared message schema: what every provider's reasoning, text and tool use becomes.

Messages are small immutable pydantic models. An assistant `Message` keeps its parts in the
order the provider returned them, and every opaque proof (signatures, redacted payloads,
encrypted reasoning) is kept exactly as received, as a string, so it can go back byte for byte.
Provider data with no shared meaning stays beside the shared fields in `provider_details`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Annotated, Any, Literal, cast

from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    JsonValue,
    NonNegativeInt,
    TypeAdapter,
    ValidationError,
    model_validator,
)
from pydantic_core import PydanticSerializationError

from .errors import HistoryError

__all__ = [
    "FinishReason",
    "Message",
    "Part",
    "TextPart",
    "ThinkingBlock",
    "ToolCall",
    "ToolResult",
    "Usage",
    "dump_messages",
    "load_messages",
]

FinishReason = Literal["stop", "tool_call", "length", "content_filter", "error"]
"""Why the model stopped, normalised across providers (the raw value is in `provider_details`)."""

ProviderDetails = dict[str, JsonValue]


def _is_zero(value: int) -> bool:
    return value == 0


def _is_false(value: bool) -> bool:
    return not value


class _Frozen(BaseModel):
    # NaN and infinities are not JSON: refused, so what is kept is what `dump_messages` writes.
    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)


class TextPart(_Frozen):
    """Visible text. `signature` is set where the provider signs text (Gemini)."""

    kind: Literal["text"] = "text"
    text: str
    signature: str | None = None
    provider_details: ProviderDetails | None = None


class ThinkingBlock(_Frozen):
    """One block of model reasoning with its proof.

    Three kinds, one constructor each:
    - `ThinkingBlock.plain(text)`: visible reasoning with no proof (DeepSeek, `<think>` tags...).
    - `ThinkingBlock.signed(text, signature)`: reasoning with the provider's signature; the text
      may be empty (Anthropic `display: "omitted"`, Gemini signature-only thoughts).
    - `ThinkingBlock.redacted_payload(data)`: an encrypted payload with no visible text.

    `signature` and `redacted` are opaque strings; providers whose proofs are bytes store them
    as standard base64. An OpenAI Responses reasoning item keeps its `rs_...` id in `id` and its
    `encrypted_content` in `signature`.
    """

    kind: Literal["thinking"] = "thinking"
    text: str = ""
    signature: str | None = None
    redacted: str | None = None
    id: str | None = None
    provider_details: ProviderDetails | None = None

    @model_validator(mode="after")
    def _check_kind(self) -> ThinkingBlock:
        problem = self.problem()
        if problem is not None:
            raise ValueError(problem)
        return self

    def problem(self) -> str | None:
        """Why this block is invalid, or None when it is valid."""
        if self.redacted is not None:
            if self.text:
                return "a thinking block cannot have both text and a redacted payload"
            if self.signature is not None:
                return "a redacted thinking block cannot carry a signature"
            return None
        if not self.text and self.signature is None and self.id is None:
            return "a thinking block needs text, a signature or a redacted payload"
        return None

    @classmethod
    def plain(cls, text: str, **fields: Any) -> ThinkingBlock:
        """Visible reasoning that carries no proof."""
        return cls(text=text, **fields)

    @classmethod
    def signed(cls, text: str, signature: str, **fields: Any) -> ThinkingBlock:
        """Reasoning signed by the provider (the text may be empty)."""
        return cls(text=text, signature=signature, **fields)

    @classmethod
    def redacted_payload(cls, data: str, **fields: Any) -> ThinkingBlock:
        """Reasoning the provider returned encrypted, with no visible text."""
        return cls(redacted=data, **fields)

    @property
    def is_redacted(self) -> bool:
        return self.redacted is not None

    @property
    def is_signed(self) -> bool:
        return self.signature is not None


class ToolCall(_Frozen):
    """A tool the model asked to run.

    `arguments` is a dict where the provider returns one, or the exact JSON text where the
    provider returns a string (OpenAI), so it can be replayed unchanged; `arguments_dict()`
    parses either. `signature` is Gemini's thought signature on a function call.
    """

    kind: Literal["tool_call"] = "tool_call"
    id: str
    name: str
    arguments: dict[str, JsonValue] | str = Field(default_factory=dict[str, JsonValue])
    signature: str | None = None
    provider_details: ProviderDetails | None = None

    def arguments_dict(self) -> dict[str, Any]:
        """The arguments as a dict; raises `ValueError` when the JSON text is not an object
        (or is nested too deeply to parse: the text comes from a model, so it may be hostile)."""
        if isinstance(self.arguments, dict):
            return dict(self.arguments)
        if not self.arguments.strip():
            return {}
        try:
            parsed = json.loads(self.arguments)
        except RecursionError:
            raise ValueError("the JSON is nested too deeply to parse") from None
        if not isinstance(parsed, dict):
            raise ValueError(f"tool arguments must be a JSON object, got {self.arguments!r}")
        return dict(parsed)  # pyright: ignore[reportUnknownArgumentType]


class ToolResult(_Frozen):
    """The outcome of a tool call, sent back on the next user turn."""

    kind: Literal["tool_result"] = "tool_result"
    call_id: str
    name: str
    content: JsonValue = None
    is_error: bool = Field(default=False, exclude_if=_is_false)
    provider_details: ProviderDetails | None = None

    def content_text(self) -> str:
        """The content as text: strings as they are, anything else as JSON."""
        if isinstance(self.content, str):
            return self.content
        return json.dumps(self.content, ensure_ascii=False)


Part = Annotated[TextPart | ThinkingBlock | ToolCall | ToolResult, Field(discriminator="kind")]
"""Any part of a message."""


class Usage(_Frozen):
    """Token counts. `output_tokens` includes `thinking_tokens` on every provider."""

    input_tokens: NonNegativeInt = 0
    output_tokens: NonNegativeInt = 0
    thinking_tokens: NonNegativeInt = Field(default=0, exclude_if=_is_zero)
    cache_read_tokens: NonNegativeInt = Field(default=0, exclude_if=_is_zero)
    cache_write_tokens: NonNegativeInt = Field(default=0, exclude_if=_is_zero)
    requests: NonNegativeInt = Field(default=0, exclude_if=_is_zero)

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            thinking_tokens=self.thinking_tokens + other.thinking_tokens,
            cache_read_tokens=self.cache_read_tokens + other.cache_read_tokens,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
            requests=self.requests + other.requests,
        )


class Message(_Frozen):
    """One turn of a conversation.

    User messages hold the prompt text and tool results; assistant messages hold text, thinking
    and tool calls in the provider's order, plus their provenance: `scope` is the replay identity
    of the endpoint that produced them (`anthropic`, `bedrock`, `gemini`, `vertex`, `openai`,
    `azure`, `openai-responses`, or a compatible endpoint's name) and `model` the model name.
    Signatures are only ever replayed natively to the same scope. In JSON the scope is written
    under its original key, `"provider"`, so histories persisted before the rename still load.
    """

    model_config = ConfigDict(
        frozen=True, extra="forbid", allow_inf_nan=False, serialize_by_alias=True
    )

    role: Literal["user", "assistant"]
    parts: tuple[Part, ...]
    scope: str | None = Field(
        default=None,
        validation_alias=AliasChoices("scope", "provider"),
        serialization_alias="provider",
    )
    model: str | None = None
    id: str | None = None
    usage: Usage | None = None
    finish_reason: FinishReason | None = None
    provider_details: ProviderDetails | None = None

    @classmethod
    def user(cls, text: str) -> Message:
        """A user prompt."""
        return cls(role="user", parts=(TextPart(text=text),))

    @classmethod
    def user_results(cls, results: Iterable[ToolResult]) -> Message:
        """A user turn carrying tool results."""
        return cls(role="user", parts=tuple(results))

    @property
    def thinking(self) -> list[ThinkingBlock]:
        """The thinking blocks, in order."""
        return [p for p in self.parts if isinstance(p, ThinkingBlock)]

    @property
    def text(self) -> str:
        """The visible text parts joined together."""
        return "".join(p.text for p in self.parts if isinstance(p, TextPart))

    @property
    def tool_calls(self) -> list[ToolCall]:
        return [p for p in self.parts if isinstance(p, ToolCall)]

    @property
    def tool_results(self) -> list[ToolResult]:
        return [p for p in self.parts if isinstance(p, ToolResult)]


_MESSAGES = TypeAdapter(list[Message])


def dump_messages(messages: Sequence[Message]) -> str:
    """Serialise a history to JSON, keeping every signature and payload byte for byte.

    The format is additive: keys that do not apply (no thinking, no signature) are left out.
    Raises `HistoryError` naming the message and part whose text is not valid Unicode (a lone
    surrogate), which no JSON file can hold.
    """
    try:
        return _MESSAGES.dump_json(list(messages), exclude_none=True).decode()
    except PydanticSerializationError as exc:
        for i, message in enumerate(messages):
            for j, part in enumerate(message.parts):
                if not _encodable(part):
                    raise HistoryError(
                        "text is not valid Unicode (a lone surrogate): it cannot be persisted",
                        message_index=i,
                        part_index=j,
                    ) from exc
        raise


def load_messages(data: str | bytes) -> list[Message]:
    """Load a history written by `dump_messages` (or by an older version of it).

    Raises `HistoryError` naming the message and part when the JSON holds an invalid part,
    and naming the message when an object in it repeats a key (`dump_messages` never writes
    one: a repeated key means the file was edited, and which value was meant cannot be told),
    holds NaN or an infinity, or text that is not valid Unicode.
    """
    try:
        raw = json.loads(data, object_pairs_hook=_object)
    except ValueError as exc:
        raise HistoryError(f"not valid JSON: {exc}", message_index=0) from exc
    except RecursionError:
        raise HistoryError("the JSON is nested too deeply to load", message_index=0) from None
    if isinstance(raw, list):
        for i, item in enumerate(cast("list[Any]", raw)):
            problem = _json_problem(item)
            if problem is not None:
                raise HistoryError(problem, message_index=i)
    try:
        return _MESSAGES.validate_python(raw)
    except ValidationError as exc:
        raise _history_error(exc) from exc


class _Repeated(dict[str, Any]):
    """A JSON object in which `key` appeared more than once."""

    key: str = ""


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) == len(pairs):
        return obj
    seen: set[str] = set()
    repeated = _Repeated(obj)
    repeated.key = next(k for k, _ in pairs if k in seen or seen.add(k))
    return repeated


def _json_problem(value: Any) -> str | None:
    """What no history may hold, though Python's JSON parser takes it: a repeated key, or text
    that is not valid Unicode (an escaped lone surrogate)."""
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            if not valid_unicode(node):
                return "text is not valid Unicode (a lone surrogate)"
        elif isinstance(node, _Repeated):
            return f"the key {node.key!r} appears twice in one object"
        elif isinstance(node, dict):
            stack.extend(cast("dict[str, Any]", node).values())
        elif isinstance(node, list):
            stack.extend(cast("list[Any]", node))
    return None


def valid_unicode(text: str) -> bool:
    """Whether `text` can be encoded (holds no lone surrogate), so it can be sent and persisted."""
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _encodable(part: Part) -> bool:
    try:
        _PART.dump_json(part)
    except PydanticSerializationError:
        return False
    return True


_PART: TypeAdapter[Part] = TypeAdapter(Part)


def _history_error(exc: ValidationError) -> HistoryError:
    error = exc.errors(include_url=False)[0]
    loc = error["loc"]
    reason = error["msg"].removeprefix("Value error, ")
    message_index = loc[0] if loc and isinstance(loc[0], int) else 0
    part_index = loc[2] if len(loc) > 2 and loc[1] == "parts" and isinstance(loc[2], int) else None
    field = ".".join(str(x) for x in loc[1:] if not isinstance(x, int))
    if field and part_index is None:
        reason = f"{field}: {reason}"
    return HistoryError(reason, message_index=message_index, part_index=part_index)
