"""What the Chat Completions and Responses adapters share: the thinking configuration, their
base class (extra body and headers, the client's credentials, the error for a failed stream),
tool choice and user turns in the shape both APIs take, the SDK's errors as `ProviderError` (a
broken stream as `StreamInterrupted`), and keeping credentials out of every message.

Imports the `openai` SDK. `OpenAIThinking` and its value types are public through
`thinkagent.providers.openai`; the rest is private to the family.
"""

from __future__ import annotations

import base64
import json
import mimetypes
import re
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Literal, cast, get_args

import httpx2
import openai
from openai.types.shared import ReasoningEffort as _SDKReasoningEffort

from ...errors import ConfigurationError, ProviderError
from ...history import ForeignReasoning
from ...messages import Document, Image, Message, TextPart, ToolResult
from ...stream import MessageAssembler
from .._common import (
    AdapterBase,
    JsonPieces,
    connection_error,
    copy_settings,
    encoded_post,
    interrupted,
    retryable_status,
    tool_choice_name,
    unreadable,
    untransformed,
)
from ..base import ModelSettings, ToolDefinition

__all__ = [
    "STREAM_BREAKS",
    "OpenAIAdapter",
    "OpenAIThinking",
    "ReasoningContext",
    "ReasoningEffort",
    "ReasoningFormat",
    "ReasoningMode",
    "ReasoningSummary",
    "add_hint",
    "client_from_environment",
    "client_secrets",
    "data_url",
    "file_name",
    "provider_error",
    "redact",
    "send_json",
    "set_tool_choice",
    "strict_schema",
    "user_items",
]

ReasoningEffort = Literal["none", "minimal", "low", "medium", "high", "xhigh", "max"]
"""`reasoning_effort` values the `openai` SDK names (a model accepts a subset of them)."""


def _sdk_efforts() -> tuple[str, ...]:
    values: list[str] = []
    for arg in get_args(_SDKReasoningEffort):
        values.extend(a for a in get_args(arg) if isinstance(a, str))
    return tuple(values)


_EFFORTS: tuple[str, ...] = _sdk_efforts() or get_args(ReasoningEffort)
"""The literal values of the installed SDK's `ReasoningEffort` type."""

ReasoningSummary = Literal["auto", "concise", "detailed"]
"""`reasoning.summary` values on the Responses API."""

_SUMMARIES: tuple[str, ...] = get_args(ReasoningSummary)


ReasoningContext = Literal["auto", "current_turn", "all_turns"]
"""`reasoning.context` on Responses: which earlier reasoning items the model sees on later turns
(`auto`: the model's default, `all_turns` on the gpt-5.6 family, `current_turn` before it)."""

_CONTEXTS: tuple[str, ...] = get_args(ReasoningContext)

ReasoningMode = Literal["standard", "pro"]
"""`reasoning.mode` values the `openai` SDK names (gpt-5.6); the field takes any string."""

ReasoningFormat = Literal["parsed", "raw", "hidden"]
"""`reasoning_format` values (Groq, Cerebras): reasoning in its own field, inline in the
content between `<think>` tags, or not returned."""

_FORMATS: tuple[str, ...] = get_args(ReasoningFormat)


@dataclass(frozen=True, slots=True)
class OpenAIThinking:
    """How an OpenAI-family model reasons: one immutable value, checked when it is built.

    - `effort`: `reasoning_effort` on Chat Completions, `reasoning.effort` on Responses
      (None: the model's default).
    - `summary`: `reasoning.summary` on Responses (None: no summary, so thinking blocks carry
      no visible text). Chat Completions has no summary and refuses one.
    - `context`: `reasoning.context` on Responses (`auto`, `current_turn`, `all_turns`): which
      earlier reasoning items the model sees on later turns; None: the model's default.
    - `mode`: `reasoning.mode` on Responses (`standard` or `pro` on gpt-5.6).
    - `enabled`: the endpoint's own on/off switch, for Chat dialects that have one
      (`thinking: {"type": ...}` on DeepSeek, Kimi and Z.AI, `enable_thinking` on DashScope,
      `think` on Ollama, `reasoning.enabled` on OpenRouter and Together, the chat template's
      switch on vLLM). None: the endpoint's default.
    - `format`: `reasoning_format` on Groq and Cerebras.
    - `split`: `reasoning_split` on MiniMax (reasoning in `reasoning_details` rather than inline).
    - `preserve`: keep past turns' reasoning in the model's context (Kimi `thinking.keep:
      "all"`, Z.AI `clear_thinking: false`); every earlier turn's reasoning is then sent back.
    - `budget_tokens`: a reasoning token budget (OpenRouter `reasoning.max_tokens`, DashScope
      `thinking_budget`).

    A field the endpoint's dialect has no switch for is refused when the model is built.
    `ModelSettings(thinking=...)`, when given, decides `enabled` and `effort` for that request.

    ```python
    OpenAIResponsesModel("gpt-5", thinking=OpenAIThinking(effort="high", summary="auto"))
    OpenAIChatModel("glm-4.6", dialect="zai", thinking=OpenAIThinking(preserve=True))
    ```
    """

    effort: ReasoningEffort | None = None
    summary: ReasoningSummary | None = None
    context: ReasoningContext | None = None
    mode: ReasoningMode | str | None = None
    enabled: bool | None = None
    format: ReasoningFormat | None = None
    split: bool | None = None
    preserve: bool | None = None
    budget_tokens: int | None = None

    def __post_init__(self) -> None:
        if self.effort is not None and self.effort not in _EFFORTS:
            raise ConfigurationError(
                f"effort must be one of {', '.join(map(repr, _EFFORTS))} or None, "
                f"got {self.effort!r}"
            )
        if self.summary is not None and self.summary not in _SUMMARIES:
            raise ConfigurationError(
                f"summary must be one of {', '.join(map(repr, _SUMMARIES))} or None, "
                f"got {self.summary!r}"
            )
        if self.context is not None and self.context not in _CONTEXTS:
            raise ConfigurationError(
                f"context must be one of {', '.join(map(repr, _CONTEXTS))} or None, "
                f"got {self.context!r}"
            )
        mode = cast("object", self.mode)
        if mode is not None and (not isinstance(mode, str) or not mode):
            raise ConfigurationError(f"mode must be a non-empty string or None, got {mode!r}")
        if self.format is not None and self.format not in _FORMATS:
            raise ConfigurationError(
                f"format must be one of {', '.join(map(repr, _FORMATS))} or None, "
                f"got {self.format!r}"
            )
        for name in ("enabled", "split", "preserve"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, bool):
                raise ConfigurationError(f"{name} must be True, False or None, got {value!r}")
        budget = cast("object", self.budget_tokens)  # checked as what it may be at runtime
        if budget is not None and (
            not isinstance(budget, int) or isinstance(budget, bool) or budget < 1
        ):
            raise ConfigurationError(f"budget_tokens must be a positive int, got {budget!r}")

    def to_param(self) -> dict[str, str]:
        """The Responses `reasoning` parameter: the keys that are set."""
        fields = (
            ("effort", self.effort),
            ("summary", self.summary),
            ("context", self.context),
            ("mode", self.mode),
        )
        return {key: value for key, value in fields if value is not None}


STREAM_BREAKS: tuple[type[BaseException], ...] = (
    openai.APIConnectionError,
    httpx2.HTTPError,
    json.JSONDecodeError,
)
"""What a stream raises when it breaks off: a dropped connection, a timeout, a truncated event."""

_RETRYABLE_TYPES = frozenset(
    {
        "server_error",
        "internal_error",
        "overloaded_error",
        "rate_limit_error",
        "rate_limit_exceeded",
        "service_unavailable",
        "timeout",
    }
)
# Keys the services echo back in errors ("Incorrect API key provided: sk-...abcd").
_KEY_LIKE = re.compile(r"\b(?:sk|rk|pk)-[A-Za-z0-9_*.\-]{4,}")
_BEARER = re.compile(r"(?i)\bBearer\s+[A-Za-z0-9_\-.=:/+]+")


class OpenAIAdapter(AdapterBase[openai.AsyncOpenAI, OpenAIThinking]):
    """What both OpenAI adapters have beyond `AdapterBase`: the extra body and headers of every
    request, the client's credentials (scrubbed from every error), and the error for a stream
    that failed."""

    def __init__(
        self,
        model_name: str,
        *,
        client: openai.AsyncOpenAI,
        scope: str,
        thinking: OpenAIThinking | None,
        foreign_reasoning: ForeignReasoning,
        settings: ModelSettings | None,
        extra_body: Mapping[str, Any] | None,
        extra_headers: Mapping[str, str] | None,
    ) -> None:
        if thinking is not None and not isinstance(thinking, OpenAIThinking):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise ConfigurationError(
                f"thinking must be an OpenAIThinking, got {type(thinking).__name__}"
            )
        super().__init__(
            model_name,
            client=client,
            scope=scope,
            thinking=thinking,
            foreign_reasoning=foreign_reasoning,
            settings=settings,
        )
        self._extra_body: Mapping[str, Any] = MappingProxyType(dict(extra_body or {}))
        self._extra_headers: Mapping[str, str] = MappingProxyType(dict(extra_headers or {}))
        self._secrets = client_secrets(client)

    @property
    def extra_body(self) -> Mapping[str, Any]:
        """Extra JSON fields sent on every request (under each request's own)."""
        return self._extra_body

    @property
    def extra_headers(self) -> Mapping[str, str]:
        """Extra HTTP headers sent on every request (under each request's own)."""
        return self._extra_headers

    def map_error(self, exc: BaseException) -> BaseException:
        """The `ProviderError` for an SDK exception (the service's message, status and type,
        credentials masked); anything else comes back as it is."""
        if isinstance(exc, json.JSONDecodeError):  # a 200 whose body is not JSON
            return unreadable(exc, scope=self.scope)
        if not isinstance(exc, openai.OpenAIError):
            return exc
        return provider_error(exc, scope=self.scope, secrets=self._secrets)

    def _stream_error(
        self, exc: BaseException | None, builder: MessageAssembler, model: str, terminal: str
    ) -> BaseException:
        """The error for a stream that ended before `terminal`: `StreamInterrupted` (with what
        had arrived) when it stopped (`exc` None) or broke off (connection, timeout, a truncated
        event), else `map_error` of the service's error."""
        if isinstance(exc, openai.OpenAIError) and not isinstance(exc, openai.APIConnectionError):
            return self.map_error(exc)
        if exc is None:
            reason = f"the stream ended before {terminal}"
        else:
            reason = f"the stream broke before {terminal}: {type(exc).__name__}"
        return interrupted(reason, builder, scope=self.scope, model=model)


SDK_ERRORS = (openai.OpenAIError, json.JSONDecodeError)
"""What a `create` call raises: the service's errors, and a 200 body that is not JSON."""


_OMITTED = (openai.Omit, openai.NotGiven)


def send_json(
    client: object,
    resource: Callable[[Any], Any],
    typed: Callable[..., Awaitable[Any]],
    params: dict[str, Any],
    field: str,
    text: JsonPieces,
    **stream: bool,
) -> Awaitable[Any]:
    """`create(**params)` on `client`, with `field`, the conversation, handed to the SDK as JSON
    data it does not transform (`untransformed`) and, where the client sends a body as it is
    given, sent as `text`, its JSON put together from items encoded once (`encoded_post`, on a
    fresh `resource` of the client: `AsyncCompletions` or `AsyncResponses`) (ADR 180). Not
    sent as text: an Azure client's body (its deployments are routed by the parsed body) and
    one a provider runtime rewrites. A client that is not the SDK's gets `params` through
    `typed`, its own `create`."""
    if not isinstance(client, openai.AsyncOpenAI):
        return typed(**params, **stream)
    params = untransformed(params, field)
    if isinstance(client, openai.AsyncAzureOpenAI) or getattr(client, "_provider_runtime", None):
        return typed(**params, **stream)
    sdk = resource(client)
    value = params["extra_body"][field]
    sdk._post = encoded_post(sdk._post, field, value, text, _OMITTED)
    return cast("Awaitable[Any]", sdk.create(**params, **stream))


def client_from_environment(
    build: Callable[[], openai.AsyncOpenAI] | None = None,
) -> openai.AsyncOpenAI:
    """`build()` (by default `openai.AsyncOpenAI()`), with the SDK's complaint about the
    environment (no API key...) as a `ConfigurationError`."""
    try:
        return build() if build is not None else openai.AsyncOpenAI()
    except openai.OpenAIError as exc:
        raise ConfigurationError(
            f"could not build an OpenAI client from the environment: {exc}"
        ) from None


def set_tool_choice(
    params: dict[str, Any],
    settings: ModelSettings,
    tools: Sequence[ToolDefinition],
    named: Callable[[str], dict[str, Any]],
) -> None:
    """`tool_choice` and `parallel_tool_calls` as both APIs take them; `named` is the API's
    shape for the one function a named choice forces."""
    choice = settings.get("tool_choice")
    forced = tool_choice_name(choice, tools)
    if forced is not None:
        params["tool_choice"] = named(forced)
    elif choice is not None:
        params["tool_choice"] = choice
    copy_settings(settings, params, parallel_tool_calls="parallel_tool_calls")


def user_items(
    message: Message,
    result: Callable[[ToolResult], dict[str, Any]],
    content: Callable[[TextPart | Image | Document], dict[str, Any]],
) -> list[dict[str, Any]]:
    """A user message as both APIs take it: an item per tool result (`result`), then its text,
    images and documents as one `user` message, in order (a string when it is text only, its
    texts joined by a blank line: DeepSeek refuses a content array, QwenLM/qwen-code#2320;
    else the API's content parts, from `content`)."""
    out: list[dict[str, Any]] = []
    parts: list[TextPart | Image | Document] = []
    for part in message.parts:
        if isinstance(part, ToolResult):
            out.append(result(part))
        elif isinstance(part, (Image, Document)) or (isinstance(part, TextPart) and part.text):
            parts.append(part)
    if parts and all(isinstance(p, TextPart) for p in parts):
        texts = [p.text for p in parts if isinstance(p, TextPart)]
        out.append({"role": "user", "content": "\n\n".join(texts)})
    elif parts:
        out.append({"role": "user", "content": [content(p) for p in parts]})
    return out


def data_url(part: Image | Document) -> str:
    """A media part as the API takes it by reference: its URL, or its bytes as a data URL."""
    if part.data is None:
        return part.url or ""
    return f"data:{part.media_type};base64,{base64.b64encode(part.data).decode('ascii')}"


def file_name(part: Document) -> str:
    """The file name a document is sent under (its own, else one from its media type)."""
    if part.name:
        return part.name
    extension = mimetypes.guess_extension(part.media_type or "") or ""
    return f"document{extension}"


def strict_schema(schema: object) -> bool:
    """Whether a JSON schema meets OpenAI's strict-mode rules (objects closed, every property
    required), so `strict: true` can be asked for without rewriting it."""
    if isinstance(schema, list):
        return all(strict_schema(s) for s in cast("list[object]", schema))
    if not isinstance(schema, dict):
        return True
    node = cast("dict[str, Any]", schema)
    properties = node.get("properties")
    if node.get("type") == "object" or isinstance(properties, dict):
        props = cast("dict[str, Any]", properties or {})
        if node.get("additionalProperties") is not False or set(node.get("required") or ()) != set(
            props
        ):
            return False
    return all(strict_schema(v) for k, v in node.items() if k not in ("required", "enum", "const"))


def client_secrets(client: object) -> tuple[str, ...]:
    """The credentials a client holds, to scrub from error text."""
    secrets: list[str] = []
    for name in ("api_key", "_azure_ad_token"):
        value = getattr(client, name, None)
        if isinstance(value, str) and len(value) >= 4:
            secrets.append(value)
    return tuple(secrets)


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """`text` with every credential (the client's own, and anything key-shaped) masked."""
    for secret in secrets:
        if secret and secret in text:
            text = text.replace(secret, "[redacted]")
    text = _KEY_LIKE.sub("[redacted]", text)
    return _BEARER.sub("Bearer [redacted]", text)


def add_hint(error: ProviderError, hint: str) -> ProviderError:
    """Append a one-line hint to the error's text; `error.message` stays the provider's."""
    error.args = (f"{error.args[0]}\n{hint}",)
    return error


def provider_error(
    exc: openai.OpenAIError, *, scope: str, secrets: Iterable[str] = ()
) -> ProviderError:
    """The `ProviderError` for an SDK exception: the service's own message, status and type.

    Retryable: 408, 409, 429, 5xx, connection failures and timeouts, and in-stream errors
    whose type says the server was overloaded or failed.
    """
    if isinstance(exc, openai.APIConnectionError):
        timeout = isinstance(exc, openai.APITimeoutError)
        return connection_error(redact(exc.message, secrets), scope=scope, timeout=timeout)
    if isinstance(exc, openai.APIError):
        status: int | None = getattr(exc, "status_code", None)
        if status == 200:  # an error event inside a stream that had started
            status = None
        error_type = exc.type or exc.code
        message = _body_message(exc.body) or exc.message
        retryable = (
            error_type in _RETRYABLE_TYPES or exc.code in _RETRYABLE_TYPES
        ) or retryable_status(status)
        return ProviderError(
            redact(message, secrets),
            scope=scope,
            status=status,
            retryable=retryable,
            error_type=error_type,
        )
    return ProviderError(redact(str(exc), secrets), scope=scope, error_type=type(exc).__name__)


def _body_message(body: object) -> str | None:
    """The `message` of an error body (`{"message": ...}` or `{"error": {"message": ...}}`),
    with the upstream's own message when a router relays one (OpenRouter's "Provider returned
    error" carries the upstream body in `metadata.raw`)."""
    if not isinstance(body, dict):
        return None
    data = cast("dict[str, Any]", body)
    error = data.get("error")
    if isinstance(error, dict):
        data = cast("dict[str, Any]", error)
    message = data.get("message")
    if not isinstance(message, str) or not message:
        return None
    metadata = data.get("metadata")
    raw = cast("dict[str, Any]", metadata).get("raw") if isinstance(metadata, dict) else None
    if isinstance(raw, str) and raw:
        try:
            upstream = _body_message(json.loads(raw)) or raw
        except ValueError:
            upstream = raw
        return f"{message}: {upstream}"
    return message
