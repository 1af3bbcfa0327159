"""What every adapter shares: its base class (identity and options), settings plumbing, checks,
the errors for a failed request or a broken stream, and what makes a request cost its JSON: each
message's wire form kept while the message lives (`PerMessage`), and JSON text put together from
pieces encoded once (`COMPACT`, `json_object`, `json_array`).

Provider-neutral: no vendor SDK is imported here.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Container, Iterable, Mapping, Sequence
from typing import Any, Generic, TypeVar, cast
from urllib.parse import urlsplit

from .._memo import PerMessage, PerPrefix
from ..builtin_tools import BuiltinTool
from ..errors import ConfigurationError, ProviderError, StreamInterrupted
from ..history import ForeignReasoning
from ..messages import (
    Part,
    ProviderBlock,
    TextPart,
    ThinkingBlock,
    ToolCall,
    valid_unicode,
)
from ..stream import MessageAssembler, model_block, model_data, model_text, tool_arguments
from .base import ModelResponse, ModelSettings, PromptCacheTTL, ToolDefinition

__all__ = [
    "COMPACT",
    "RETRYABLE_STATUSES",
    "UNREADABLE",
    "AdapterBase",
    "ClientT",
    "JsonPieces",
    "PerMessage",
    "SharedDict",
    "arguments_json",
    "arguments_object",
    "check_foreign_reasoning",
    "check_prompt_cache",
    "connection_error",
    "copy_settings",
    "detached",
    "encoded_post",
    "endpoint_host",
    "interrupted",
    "json_array",
    "json_object",
    "merge_settings",
    "received",
    "refuse_builtin_tools",
    "request_options",
    "retryable_status",
    "tool_arguments",
    "tool_choice_name",
    "unreadable",
    "untransformed",
]

ClientT = TypeVar("ClientT")
ThinkingT = TypeVar("ThinkingT")
T = TypeVar("T")

RETRYABLE_STATUSES = frozenset({408, 409, 429})
"""HTTP statuses (besides 5xx) after which the same request may succeed."""


class AdapterBase(Generic[ClientT, ThinkingT]):
    """The identity and options every adapter has, read-only: `model_name`, `scope`, `client`,
    `thinking` (the family's config object, or None for the model's default),
    `foreign_reasoning` and the default `settings`; and a repr that never shows the client.

    Subclasses check their own options first, then call `__init__` (ADR 29)."""

    def __init__(
        self,
        model_name: str,
        *,
        client: ClientT,
        scope: str,
        thinking: ThinkingT | None,
        foreign_reasoning: ForeignReasoning,
        settings: ModelSettings | None,
    ) -> None:
        check_foreign_reasoning(foreign_reasoning)
        self._model_name = model_name
        self._client = client
        self._scope = scope
        self._thinking = thinking
        self._foreign_reasoning: ForeignReasoning = foreign_reasoning
        self._settings: ModelSettings = settings or {}
        self._per_message = PerMessage()
        """What each message of a history sends, derived once (ADR 180)."""
        self._per_prefix = PerPrefix()
        """What the passes over a conversation found in its first messages (ADR 180)."""

    @property
    def model_name(self) -> str:
        return self._model_name

    @property
    def scope(self) -> str:
        """The replay identity of this model's messages (their proofs are valid only there)."""
        return self._scope

    @property
    def client(self) -> ClientT:
        """The official SDK client this model sends with."""
        return self._client

    @property
    def thinking(self) -> ThinkingT | None:
        """The thinking configuration (None: the model's default)."""
        return self._thinking

    @property
    def foreign_reasoning(self) -> ForeignReasoning:
        """What happens to reasoning this scope cannot replay natively: dropped or sent as text."""
        return self._foreign_reasoning

    @property
    def settings(self) -> ModelSettings:
        """Default settings, under each request's own."""
        return self._settings

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model_name={self._model_name!r}, scope={self._scope!r})"


def check_foreign_reasoning(policy: str) -> None:
    if policy not in ("drop", "text"):
        raise ConfigurationError(f"foreign_reasoning must be 'drop' or 'text', got {policy!r}")


def check_prompt_cache(value: object) -> bool | PromptCacheTTL:
    """The `prompt_cache` setting (`True` when unset); `ConfigurationError` when it is not
    `True`, `False`, `"5m"` or `"1h"`."""
    if isinstance(value, bool) or value in ("5m", "1h"):
        return value  # pyright: ignore[reportReturnType]
    raise ConfigurationError(f"prompt_cache must be True, False, '5m' or '1h', got {value!r}")


def merge_settings(defaults: ModelSettings, settings: ModelSettings) -> ModelSettings:
    """A request's settings over the model's defaults (headers and extra body merged by key)."""
    if not defaults:
        return settings
    if not settings:
        return defaults
    merged: dict[str, Any] = {**defaults, **settings}
    if "extra_headers" in defaults and "extra_headers" in settings:
        merged["extra_headers"] = {**defaults["extra_headers"], **settings["extra_headers"]}
    if "extra_body" in defaults and "extra_body" in settings:
        merged["extra_body"] = {**defaults["extra_body"], **settings["extra_body"]}
    return cast("ModelSettings", merged)


def copy_settings(settings: ModelSettings, target: dict[str, Any], **fields: str) -> None:
    """Copy each setting named in `fields` that is set into `target`, under its wire name
    (`top_p="topP"`); a list is copied."""
    if not settings:
        return
    values = cast("Mapping[str, Any]", settings)
    for name, field in fields.items():
        if name in values:
            value = values[name]
            target[field] = list(cast("list[Any]", value)) if isinstance(value, list) else value


def request_options(
    params: dict[str, Any],
    settings: ModelSettings,
    extra_body: Mapping[str, Any],
    extra_headers: Mapping[str, str],
    *,
    body_settings: Sequence[str] = (),
) -> None:
    """Add the per-call options of the `anthropic` and `openai` SDKs to `params`: `extra_body`
    and `extra_headers` (the model's, under the request's) and `timeout`. `body_settings` go
    into the extra body (settings the SDK has no parameter for)."""
    if not settings:  # the model's own options only
        if extra_body:
            params["extra_body"] = dict(extra_body)
        if extra_headers:
            params["extra_headers"] = dict(extra_headers)
        return
    body = {**extra_body, **settings.get("extra_body", {})}
    copy_settings(settings, body, **{name: name for name in body_settings})
    if body:
        params["extra_body"] = body
    headers = {**extra_headers, **settings.get("extra_headers", {})}
    if headers:
        params["extra_headers"] = headers
    if "timeout" in settings:
        params["timeout"] = settings["timeout"]


_DEFAULT_PORTS = {"http": 80, "https": 443}


def endpoint_host(base_url: object) -> str:
    """Where a client sends, as a scope suffix: the lower-case host of `base_url`, with
    `:<port>` when the port is not the scheme's default (IPv6 hosts in brackets); `localhost`
    for any server on this machine, whatever its port (a local server, the emulator, whose
    ports change from run to run: histories recorded against one must replay on the next)."""
    url = urlsplit(str(base_url))
    host = (url.hostname or "").lower()
    if host == "localhost" or host == "::1" or host.startswith("127."):
        return "localhost"
    if ":" in host:  # IPv6
        host = f"[{host}]"
    try:
        port = url.port
    except ValueError:
        port = None
    if port is not None and port != _DEFAULT_PORTS.get(url.scheme.lower()):
        host = f"{host}:{port}"
    return host


def refuse_builtin_tools(tools: Sequence[BuiltinTool], where: str, hint: str = "") -> None:
    """Raise `ConfigurationError` naming the first built-in tool of a request to an adapter
    that has none (the agent refuses them sooner: `check_builtin_tools`)."""
    if tools:
        raise ConfigurationError(f"{tools[0].label} is not available on {where}{hint}")


def tool_choice_name(choice: str | None, tools: Sequence[ToolDefinition]) -> str | None:
    """The tool a named `tool_choice` forces (None for `auto`/`none`/`required`/unset).

    Raises `ConfigurationError` when the name matches no tool on offer.
    """
    if choice is None or choice in ("auto", "none", "required"):
        return None
    names = {tool.name for tool in tools}
    if choice not in names:
        offered = ", ".join(sorted(names)) or "none"
        raise ConfigurationError(
            f"tool_choice {choice!r} names no tool on offer (tools: {offered})"
        )
    return choice


def arguments_object(call: ToolCall) -> dict[str, Any]:
    """A call's arguments as an object, for APIs that take one: `{}` for arguments that never
    parsed (another provider's text)."""
    if isinstance(call.arguments, dict):
        return call.arguments
    try:
        return call.arguments_dict()
    except ValueError:
        return {}


def arguments_json(call: ToolCall) -> str:
    """A call's arguments as JSON text: exactly as received when they came as text."""
    if isinstance(call.arguments, str):
        return call.arguments
    return json.dumps(call.arguments, ensure_ascii=False)


def retryable_status(status: int | None, statuses: Container[int] = RETRYABLE_STATUSES) -> bool:
    """Whether an HTTP status says the same request may succeed later: one of `statuses`, or
    5xx."""
    return status is not None and (status in statuses or status >= 500)


def connection_error(message: str, *, scope: str, timeout: bool) -> ProviderError:
    """The retryable `ProviderError` for a request that got no response: a timeout, or a
    connection that failed."""
    return ProviderError(
        message,
        scope=scope,
        retryable=True,
        error_type="timeout" if timeout else "connection_error",
    )


UNREADABLE: tuple[type[Exception], ...] = (ValueError, KeyError, TypeError, AttributeError)
"""What reading a 200 body can raise when it is not JSON (`json.JSONDecodeError`) or not the
shape its wire API documents (pydantic's `ValidationError`, a missing key or attribute)."""


def unreadable(exc: Exception, *, scope: str) -> ProviderError:
    """The retryable `ProviderError` for a 200 response that cannot be understood (a truncated
    or corrupted body is usually transient): never a raw parsing error, always with the run's
    evidence attached by the agent."""
    return ProviderError(
        f"the response could not be read: {type(exc).__name__}: {exc}",
        scope=scope,
        retryable=True,
        error_type="malformed_response",
    )


def interrupted(
    reason: str, assembler: MessageAssembler, *, scope: str, model: str
) -> StreamInterrupted:
    """`StreamInterrupted` for a stream that ended before its terminal event, with what had
    arrived (the block being built left unsigned)."""
    return StreamInterrupted(
        reason, scope=scope, partial=assembler.partial(scope=scope, model=model)
    )


COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)
"""JSON as the `anthropic` and `openai` SDKs send it (`openapi_dumps`: UTF-8, no spaces, no
NaN)."""


JsonPieces = tuple[str, ...]
"""JSON text in pieces, joined once where the body is written: a long conversation's text is
copied once into the body, not once per bracket (`json_array`, `json_object`)."""


def json_object(
    members: Iterable[tuple[str, str | JsonPieces]], separators: tuple[str, str] = (",", ":")
) -> str:
    """A JSON object from its members, each a key and its value's JSON text (encoded before,
    whole or in pieces), in order, as `json.dumps` writes it with `separators`."""
    item, key = separators
    pieces: list[str] = ["{"]
    for k, v in members:
        pieces += (item, json.dumps(k), key) if len(pieces) > 1 else (json.dumps(k), key)
        if isinstance(v, str):
            pieces.append(v)
        else:
            pieces += v
    pieces.append("}")
    return "".join(pieces)


def json_array(items: Iterable[str], separator: str = ",") -> JsonPieces:
    """A JSON array from its items' JSON text, as `json.dumps` writes it with `separator`, in
    pieces (`JsonPieces`)."""
    return ("[", separator.join(items), "]")


class SharedDict(dict[str, Any]):
    """JSON data that is shared and never changed (what `PerMessage` keeps), handed to an SDK
    that deep-copies its arguments: its deep copy is itself, so the copy costs nothing (its
    JSON is the same)."""

    __slots__ = ()

    def __deepcopy__(self, memo: dict[int, Any]) -> SharedDict:
        return self


def detached(value: T) -> T:
    """A copy of JSON data (dicts and lists copied all the way down): what a public method
    hands out when the data is also kept (`PerMessage`), so a caller may change it."""
    if isinstance(value, dict):
        return cast("T", {k: detached(v) for k, v in cast("dict[Any, Any]", value).items()})
    if isinstance(value, list):
        return cast("T", [detached(v) for v in cast("list[Any]", value)])
    return value


def untransformed(params: dict[str, Any], field: str) -> dict[str, Any]:
    """`params` for an SDK method that transforms its parameters (the `openai` SDK's `create`),
    with `field` (the conversation, a long list of plain JSON data) handed over as it is: an
    empty list in its place, which the transform walks at no cost, and the list itself in
    `extra_body`, which the SDK merges into the body after the transform, under the same key,
    so the body keeps its keys' order and its bytes (ADR 180). The caller's own `extra_body`
    keeps the last word, as it would have."""
    extra = params.get("extra_body")
    value = params[field]
    return {**params, field: [], "extra_body": {field: value, **extra} if extra else {field: value}}


def encoded_post(
    post: Callable[..., Awaitable[Any]],
    field: str,
    value: object,
    text: JsonPieces,
    omitted: tuple[type, ...],
) -> Callable[..., Awaitable[Any]]:
    """A `post` for an SDK resource (in place of its client's, which its methods call with the
    body they built) that sends that body as JSON text: the body with the call's extra body
    merged in and its `omitted` values left out, as the SDK merges and encodes it (`COMPACT`),
    but with `field`, when it holds `value`, written as `text` (the conversation's JSON, put
    together from pieces encoded once) instead of encoded again (ADR 180). Should the SDK's
    method not call it, the SDK sends the same body itself."""

    async def send(
        path: str,
        *,
        body: Mapping[str, Any] | None = None,
        options: Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> Any:
        rest = dict(options or {})
        extra = cast("Mapping[str, Any] | None", rest.pop("extra_json", None))
        merged: dict[str, Any] = {**(body or {}), **(extra or {})}
        members: list[tuple[str, str | JsonPieces]] = [
            (key, text if key == field and item is value else COMPACT.encode(item))
            for key, item in merged.items()
            if not isinstance(item, omitted)
        ]
        return await post(path, content=json_object(members).encode(), options=rest, **kwargs)

    return send


def received(response: ModelResponse) -> ModelResponse:
    """A non-streamed response as it can be kept and sent back, as a stream's fold keeps it:
    text and thinking that are not valid Unicode mended (`model_text`; the mended part loses
    its signature, which was of other text), tool arguments that are not a plain JSON object
    kept as their JSON text (`tool_arguments`), provider details and blocks through
    `model_data`. The response itself when nothing needed it (the usual case, checked
    cheaply)."""
    message = response.message
    parts = tuple(_received(part) for part in message.parts)
    if all(new is old for new, old in zip(parts, message.parts, strict=True)):
        return response
    return ModelResponse(message.model_copy(update={"parts": parts}), response.warnings)


def _received(part: Part) -> Part:
    if isinstance(part, ProviderBlock):
        return model_block(part)
    update: dict[str, Any] = {}
    if part.provider_details is not None:
        details = model_data(part.provider_details)
        if details is not part.provider_details:
            update["provider_details"] = details
    if isinstance(part, TextPart | ThinkingBlock):
        if not valid_unicode(part.text):  # mended: the proof was of other text
            update |= {"text": model_text(part.text), "signature": None}
    elif isinstance(part, ToolCall):
        arguments = tool_arguments(part.arguments, parse=isinstance(part.arguments, dict))
        if arguments is not part.arguments:
            update["arguments"] = arguments
        if not (valid_unicode(part.id) and valid_unicode(part.name)):
            update |= {"id": model_text(part.id), "name": model_text(part.name)}
    return part.model_copy(update=update) if update else part
