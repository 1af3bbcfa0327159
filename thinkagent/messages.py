"""The shared message schema: what every provider's reasoning, text and tool use becomes.

Messages are small immutable pydantic models. An assistant `Message` keeps its parts in the
order the provider returned them, and every opaque proof (signatures, redacted payloads,
encrypted reasoning) is kept exactly as received, as a string, so it can go back byte for byte.
Provider data with no shared meaning stays beside the shared fields in `provider_details`.
"""

from __future__ import annotations

import base64
import binascii
import json
import mimetypes
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal, cast

from pydantic import (
    AliasChoices,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    JsonValue,
    NonNegativeInt,
    PlainSerializer,
    TypeAdapter,
    ValidationError,
    model_validator,
)
from pydantic_core import PydanticSerializationError

from .errors import HistoryError

__all__ = [
    "Citation",
    "Document",
    "FinishReason",
    "Image",
    "Media",
    "Message",
    "OpaqueBlock",
    "Part",
    "ServerToolCall",
    "ServerToolResult",
    "SystemNote",
    "TextPart",
    "ThinkingBlock",
    "ToolCall",
    "ToolResult",
    "Usage",
    "UserContent",
    "UserPrompt",
    "dump_messages",
    "json_object",
    "load_messages",
]

FinishReason = Literal[
    "stop",
    "tool_call",
    "length",
    "content_filter",
    "error",
    "refusal",
    "model_context_window_exceeded",
    "pause_turn",
]
"""Why the model stopped, normalised across providers (the raw value is in `provider_details`).

`refusal`: the model declined (Claude's classifiers; the details are in `provider_details`);
`model_context_window_exceeded`: the conversation filled the model's context window;
`pause_turn`: the provider paused a long turn (a server tool loop) that the next request,
sending the message back as it is, continues (the agent does so)."""

ProviderDetails = dict[str, JsonValue]


def _is_zero(value: int) -> bool:
    return value == 0


def _is_false(value: bool) -> bool:
    return not value


class _Frozen(BaseModel):
    # NaN and infinities are not JSON: refused, so what is kept is what `dump_messages` writes.
    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)


class Citation(_Frozen):
    """A source the text around it draws on (a web page a search found, a fetched document...),
    where the provider says so.

    `url`, `title` and `cited_text` are for reading; `start` and `end` are where in its text
    part the cited passage is (character offsets, when the provider gives them). `type` is the
    provider's own (`web_search_result_location`, `url_citation`, `grounding_support`...) and
    `data` the provider's whole citation, kept byte for byte (Anthropic's `encrypted_index`
    included): adapters send it back as it came, to its own scope only.
    """

    type: str
    url: str | None = None
    title: str | None = None
    cited_text: str | None = None
    start: NonNegativeInt | None = None
    end: NonNegativeInt | None = None
    data: dict[str, JsonValue] = Field(default_factory=dict[str, JsonValue])


class TextPart(_Frozen):
    """Visible text. `signature` is set where the provider signs text (Gemini); `citations`
    are the sources the provider says it draws on (empty when none)."""

    kind: Literal["text"] = "text"
    text: str
    signature: str | None = None
    citations: tuple[Citation, ...] = Field(default=(), exclude_if=lambda c: not c)
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
        (see `json_object`: the text comes from a model, so it may be hostile)."""
        if isinstance(self.arguments, dict):
            return dict(self.arguments)
        if not self.arguments.strip():
            return {}
        return json_object(self.arguments)


def json_object(text: str) -> dict[str, Any]:
    """The JSON object `text` holds. Raises `ValueError` naming what is wrong when the text is
    not JSON (NaN and infinities are not), is not an object, is nested too deeply to parse, or
    holds text that is not valid Unicode (an escaped lone surrogate), none of which can be
    sent to an API or persisted."""
    try:
        parsed = json.loads(text, parse_constant=_not_json)
    except RecursionError:
        raise ValueError("the JSON is nested too deeply to parse") from None
    if not isinstance(parsed, dict):
        raise ValueError(f"tool arguments must be a JSON object, got {text[:200]!r}")
    problem = _json_problem(parsed)
    if problem is not None:
        raise ValueError(problem)
    return cast("dict[str, Any]", parsed)


def _not_json(constant: str) -> Any:
    raise ValueError(f"{constant} is not a JSON value")


def _base64_bytes(value: Any) -> Any:
    """Bytes as they are; text as standard base64 (how JSON holds bytes)."""
    if isinstance(value, str):
        try:
            return base64.b64decode(value, validate=True)
        except binascii.Error as exc:
            raise ValueError(f"not standard base64: {exc}") from None
    return value


Base64Bytes = Annotated[
    bytes,
    BeforeValidator(_base64_bytes),
    PlainSerializer(lambda data: base64.b64encode(data).decode("ascii"), when_used="json"),
]
"""Bytes kept exactly; written to JSON as standard base64 and read back to the same bytes."""


def _media_problem(part: Image | Document) -> str | None:
    if (part.data is None) == (part.url is None):
        return "give exactly one of data (bytes) or url"
    if part.data is not None and part.media_type is None:
        return "bytes need their media_type (such as 'image/png')"
    if part.media_type is not None and "/" not in part.media_type:
        return f"{part.media_type!r} is not a media type (such as 'image/png')"
    return None


class Image(_Frozen):
    """An image: `data` (bytes, with its `media_type` such as `"image/png"`) or a `url`.

    Usable in a prompt (`agent.run(["What is this?", Image(data=png, media_type="image/png")])`)
    and returned by tools. In JSON the bytes are standard base64 and load back byte for byte.
    """

    kind: Literal["image"] = "image"
    data: Base64Bytes | None = None
    url: str | None = None
    media_type: str | None = None
    provider_details: ProviderDetails | None = None

    @model_validator(mode="after")
    def _check(self) -> Image:
        problem = _media_problem(self)
        if (
            problem is None
            and self.media_type is not None
            and not self.media_type.startswith("image/")
        ):
            problem = f"an image needs an image/* media type, got {self.media_type!r}"
        if problem is not None:
            raise ValueError(problem)
        return self

    @classmethod
    def from_file(cls, path: str | Path, media_type: str | None = None) -> Image:
        """The image in the file at `path` (its media type guessed from the name if not given)."""
        data, guessed = _read(path, media_type)
        return cls(data=data, media_type=guessed)


class Document(_Frozen):
    """A document (a PDF, plain text...): `data` with its `media_type`, or a `url`.

    `name` is an optional title some providers show the model. Usable in a prompt and returned
    by tools, like `Image`.
    """

    kind: Literal["document"] = "document"
    data: Base64Bytes | None = None
    url: str | None = None
    media_type: str | None = None
    name: str | None = None
    provider_details: ProviderDetails | None = None

    @model_validator(mode="after")
    def _check(self) -> Document:
        problem = _media_problem(self)
        if problem is not None:
            raise ValueError(problem)
        return self

    @classmethod
    def from_file(cls, path: str | Path, media_type: str | None = None) -> Document:
        """The document in the file at `path`, named after it (media type guessed if not given)."""
        data, guessed = _read(path, media_type)
        return cls(data=data, media_type=guessed, name=Path(path).name)


def _read(path: str | Path, media_type: str | None) -> tuple[bytes, str]:
    media_type = media_type or mimetypes.guess_type(str(path))[0]
    if media_type is None:
        raise ValueError(f"cannot tell the media type of {str(path)!r}: give media_type=")
    return Path(path).read_bytes(), media_type


Media = Image | Document
"""An image or a document."""


class SystemNote(_Frozen):
    """An instruction appended to the conversation where it stands, instead of an edit of the
    instructions the earlier turns (and their thinking) were produced under.

    It ends a user message: Claude receives it as a mid-conversation system message (a
    `{"role": "system"}` entry of `messages`, right after that user turn), on the models and
    platforms that take one; other providers get its text their own way (a `developer` message
    on OpenAI's, else the user's text with a `system_note_as_text` warning: `docs/agent.md`).
    `text` is the instruction. `clear_at="next_user_message"` shows
    it to the model for the turn it follows only (it stays in the history and goes back as it
    was). `add_tools` / `remove_tools` name tools made available or withdrawn from here on.
    `instructions=True` marks the note the agent appends when its instructions changed: its
    text is then the instructions in full from here on.

    ```python
    await agent.run(["Next question...", SystemNote(text="From now on, answer in French.")])
    ```
    """

    kind: Literal["system_note"] = "system_note"
    text: str = ""
    clear_at: Literal["never", "next_user_message"] | None = None
    add_tools: tuple[str, ...] = Field(default=(), exclude_if=lambda names: not names)
    remove_tools: tuple[str, ...] = Field(default=(), exclude_if=lambda names: not names)
    instructions: bool = Field(default=False, exclude_if=_is_false)
    provider_details: ProviderDetails | None = None

    @model_validator(mode="after")
    def _check(self) -> SystemNote:
        problem = self.problem()
        if problem is not None:
            raise ValueError(problem)
        return self

    def problem(self) -> str | None:
        """Why this note is invalid, or None when it is valid."""
        changes = self.add_tools or self.remove_tools
        if not self.text and not changes:
            return "a system note needs text or a tool change"
        if self.text and not self.text.strip():
            return "a system note's text must not be only whitespace"
        if changes and self.clear_at == "next_user_message":
            return (
                "a turn-scoped system note (clear_at='next_user_message') holds text only: "
                "put tool changes in a note of their own"
            )
        both = set(self.add_tools) & set(self.remove_tools)
        if both:
            return f"a system note both adds and removes {sorted(both)[0]!r}"
        return None


UserContent = str | Image | Document | SystemNote
"""One piece of a prompt (a `SystemNote` goes last)."""

UserPrompt = str | Sequence[UserContent]
"""What `Agent.run` takes: text, or a sequence of text, images and documents."""


class ToolResult(_Frozen):
    """The outcome of a tool call, sent back on the next user turn.

    `content` is the tool's JSON result; `media` holds the images and documents it returned
    (a tool that returns an `Image`, or a list with some), in order. Adapters send them the way
    their API carries media in a tool result.
    """

    kind: Literal["tool_result"] = "tool_result"
    call_id: str
    name: str
    content: JsonValue = None
    media: tuple[Annotated[Image | Document, Field(discriminator="kind")], ...] = Field(
        default=(), exclude_if=lambda media: not media
    )
    is_error: bool = Field(default=False, exclude_if=_is_false)
    provider_details: ProviderDetails | None = None

    def content_text(self) -> str:
        """The content as text: strings as they are, anything else as JSON."""
        if isinstance(self.content, str):
            return self.content
        return json.dumps(self.content, ensure_ascii=False)


class OpaqueBlock(_Frozen):
    """A block of the provider's that thinkagent keeps without interpreting it: a Claude
    `compaction` block, a server tool's use and result, and whatever else a response holds that
    must go back on later turns.

    `data` is the whole block as the provider returned it (its `type` included) and goes back
    exactly so, in its position, to the scope that produced it only; on any other scope it is
    left out. `type` repeats the provider's block type, for reading.
    """

    kind: Literal["opaque"] = "opaque"
    type: str
    data: dict[str, JsonValue]
    provider_details: ProviderDetails | None = None

    @classmethod
    def of(cls, data: dict[str, JsonValue]) -> OpaqueBlock:
        """The block for the provider's own `data` (its `type` read from it)."""
        kind = data.get("type")
        return cls(type=kind if isinstance(kind, str) else "unknown", data=data)


class ServerToolCall(_Frozen):
    """A call of a built-in tool the provider ran itself, inside the model's turn (a web
    search, code the model wrote, a remote MCP server's tool...): nothing for the agent to run.

    For reading: `id`, `name` (the provider's name for the tool: `web_search`,
    `google_search`, an MCP tool's name...), `builtin` (thinkagent's name for the kind of tool:
    `web_search`, `code_execution`, `mcp`... as the config types name it; None for one it has no
    config for), `arguments` (the query, the code...) and `server` (an MCP server's name).

    `type` is the provider's block type and `data` the whole block as it came, kept byte for
    byte (encrypted parts and signatures untouched, like `OpaqueBlock`): it goes back exactly
    so, in its position, to the scope that produced it only, and is left out on any other.

    `approval=True` marks a call the provider waits for you to approve (a Responses
    `mcp_approval_request`): the run stops with it on `RunResult.pending_approvals`, and the
    decision goes back as the `ToolResult` that answers it (see `Agent.run(approvals=...)`).
    """

    kind: Literal["server_tool_call"] = "server_tool_call"
    id: str
    name: str
    builtin: str | None = None
    arguments: dict[str, JsonValue] | str = Field(default_factory=dict[str, JsonValue])
    server: str | None = None
    approval: bool = Field(default=False, exclude_if=_is_false)
    type: str
    data: dict[str, JsonValue]
    provider_details: ProviderDetails | None = None

    def arguments_dict(self) -> dict[str, Any]:
        """The arguments as a dict (JSON text parsed; `ValueError` when it is not an object)."""
        return ToolCall(id=self.id, name=self.name, arguments=self.arguments).arguments_dict()


class ServerToolResult(_Frozen):
    """What a built-in tool the provider ran returned (search results, code output...).

    For reading: `call_id` (the `ServerToolCall` it answers), `name`, `builtin`, `content`
    (the result in plain JSON: a search's `[{"url", "title"}...]`, code's output...) and
    `is_error`. `type` and `data` keep the provider's whole block byte for byte, as on
    `ServerToolCall`; `data` is None where the provider sends the call and its result as one
    block (a Responses output item): the call's `data` holds it, and it goes back once.
    """

    kind: Literal["server_tool_result"] = "server_tool_result"
    call_id: str
    name: str
    builtin: str | None = None
    content: JsonValue = None
    is_error: bool = Field(default=False, exclude_if=_is_false)
    type: str
    data: dict[str, JsonValue] | None = None
    provider_details: ProviderDetails | None = None


ProviderBlock = OpaqueBlock | ServerToolCall | ServerToolResult
"""The parts that keep a provider's block whole and go back only to the scope that produced
them."""

Part = Annotated[
    TextPart
    | ThinkingBlock
    | ToolCall
    | ToolResult
    | Image
    | Document
    | OpaqueBlock
    | SystemNote
    | ServerToolCall
    | ServerToolResult,
    Field(discriminator="kind"),
]
"""Any part of a message."""


class Usage(_Frozen):
    """Token counts. `output_tokens` includes `thinking_tokens` on every provider."""

    input_tokens: NonNegativeInt = 0
    output_tokens: NonNegativeInt = 0
    thinking_tokens: NonNegativeInt = Field(default=0, exclude_if=_is_zero)
    cache_read_tokens: NonNegativeInt = Field(default=0, exclude_if=_is_zero)
    cache_write_tokens: NonNegativeInt = Field(default=0, exclude_if=_is_zero)
    requests: NonNegativeInt = Field(default=0, exclude_if=_is_zero)
    server_tool_uses: dict[str, NonNegativeInt] = Field(
        default_factory=dict[str, NonNegativeInt], exclude_if=lambda uses: not uses
    )
    """Uses of the provider's built-in tools, by thinkagent's name for the tool (`web_search`,
    `web_fetch`, `code_execution`, `mcp`...): what the provider bills apart from tokens."""

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def __add__(self, other: Usage) -> Usage:
        return usage_sum(self, other)


def usage_sum(a: Usage, b: Usage, requests: int = 0) -> Usage:
    """`a + b` with `requests` more requests counted: a run adds each response's usage and its
    request in one step (one validated construction per turn, not three)."""
    return Usage(
        input_tokens=a.input_tokens + b.input_tokens,
        output_tokens=a.output_tokens + b.output_tokens,
        thinking_tokens=a.thinking_tokens + b.thinking_tokens,
        cache_read_tokens=a.cache_read_tokens + b.cache_read_tokens,
        cache_write_tokens=a.cache_write_tokens + b.cache_write_tokens,
        requests=a.requests + b.requests + requests,
        server_tool_uses=_add_uses(a.server_tool_uses, b.server_tool_uses),
    )


def _add_uses(a: dict[str, int], b: dict[str, int]) -> dict[str, int]:
    if not b:
        return a
    if not a:
        return b
    total = dict(a)
    for name, count in b.items():
        total[name] = total.get(name, 0) + count
    return total


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
    def user(cls, content: UserPrompt) -> Message:
        """A user prompt: text, or a sequence of text, images and documents (in that order),
        with `SystemNote`s last."""
        if isinstance(content, str):
            return cls(role="user", parts=(TextPart(text=content),))
        parts: list[Part] = []
        for item in content:
            if isinstance(item, str):
                parts.append(TextPart(text=item))
            elif isinstance(item, Image | Document | SystemNote):  # pyright: ignore[reportUnnecessaryIsInstance]
                parts.append(item)
            else:
                raise TypeError(
                    f"a prompt holds text, Image and Document, not {type(item).__name__}"
                )
        return cls(role="user", parts=tuple(parts))

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

    @property
    def server_tool_calls(self) -> list[ServerToolCall]:
        """The built-in tool calls the provider ran (and those awaiting approval), in order."""
        return [p for p in self.parts if isinstance(p, ServerToolCall)]

    @property
    def server_tool_results(self) -> list[ServerToolResult]:
        """What the provider's built-in tools returned, in order."""
        return [p for p in self.parts if isinstance(p, ServerToolResult)]

    @property
    def citations(self) -> list[Citation]:
        """The citations of the text parts, in order."""
        return [c for p in self.parts if isinstance(p, TextPart) for c in p.citations]

    @property
    def notes(self) -> list[SystemNote]:
        """The system notes a user message ends with, in order."""
        return [p for p in self.parts if isinstance(p, SystemNote)]

    @property
    def media(self) -> list[Image | Document]:
        """The images and documents of a prompt, in order."""
        return [p for p in self.parts if isinstance(p, Image | Document)]


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
            stack.extend(cast("dict[str, Any]", node))  # the keys
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
