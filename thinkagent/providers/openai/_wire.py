"""What the Chat Completions and Responses adapters share: the thinking configuration, their
base class (extra body and headers, the client's credentials, the error for a failed stream),
tool choice and user turns in the shape both APIs take, the SDK's errors as `ProviderError` (a
broken stream as `StreamInterrupted`), and keeping credentials out of every message.

Imports the `openai` SDK. `OpenAIThinking` and its value types are public through
`thinkagent.providers.openai`; the rest is private to the family.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Literal, cast, get_args

import httpx2
import openai
from openai.types.shared import ReasoningEffort as _SDKReasoningEffort

from ...errors import ConfigurationError, ProviderError
from ...history import ForeignReasoning
from ...messages import Message, TextPart, ToolResult
from ...stream import MessageAssembler
from .._common import (
    AdapterBase,
    connection_error,
    copy_settings,
    interrupted,
    retryable_status,
    tool_choice_name,
    unreadable,
)
from ..base import ModelSettings, ToolDefinition

__all__ = [
    "STREAM_BREAKS",
    "OpenAIAdapter",
    "OpenAIThinking",
    "ReasoningEffort",
    "ReasoningSummary",
    "add_hint",
    "client_from_environment",
    "client_secrets",
    "provider_error",
    "redact",
    "set_tool_choice",
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


@dataclass(frozen=True, slots=True)
class OpenAIThinking:
    """How an OpenAI-family model reasons: one immutable value, checked when it is built.

    - `effort`: `reasoning_effort` on Chat Completions, `reasoning.effort` on Responses
      (None: the model's default).
    - `summary`: `reasoning.summary` on Responses (None: no summary, so thinking blocks carry
      no visible text). Chat Completions has no summary and refuses one.

    ```python
    OpenAIResponsesModel("gpt-5", thinking=OpenAIThinking(effort="high", summary="auto"))
    OpenAIChatModel("gpt-5", thinking=OpenAIThinking(effort="low"))
    ```
    """

    effort: ReasoningEffort | None = None
    summary: ReasoningSummary | None = None

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

    def to_param(self) -> dict[str, str]:
        """The Responses `reasoning` parameter: the keys that are set."""
        param: dict[str, str] = {}
        if self.effort is not None:
            param["effort"] = self.effort
        if self.summary is not None:
            param["summary"] = self.summary
        return param


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
    message: Message, result: Callable[[ToolResult], dict[str, Any]], text_type: str
) -> list[dict[str, Any]]:
    """A user message as both APIs take it: an item per tool result (`result`), then its text
    as one `user` message (a string, or `text_type` parts when there are several)."""
    out: list[dict[str, Any]] = []
    texts: list[str] = []
    for part in message.parts:
        if isinstance(part, ToolResult):
            out.append(result(part))
        elif isinstance(part, TextPart) and part.text:
            texts.append(part.text)
    if len(texts) == 1:
        out.append({"role": "user", "content": texts[0]})
    elif texts:
        out.append({"role": "user", "content": [{"type": text_type, "text": t} for t in texts]})
    return out


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
    """The `message` of an error body (`{"message": ...}` or `{"error": {"message": ...}}`)."""
    if not isinstance(body, dict):
        return None
    data = cast("dict[str, Any]", body)
    error = data.get("error")
    if isinstance(error, dict):
        data = cast("dict[str, Any]", error)
    message = data.get("message")
    return message if isinstance(message, str) and message else None
