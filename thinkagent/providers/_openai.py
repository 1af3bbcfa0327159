"""What the Chat Completions and Responses adapters share: settings checks, the SDK's errors as
`ProviderError`, and keeping credentials out of every message.

Imports the `openai` SDK; `OpenAIChatModel` and `OpenAIResponsesModel` are the public faces.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from typing import Any, Literal, cast, get_args

import httpx2
import openai
from openai.types.shared import ReasoningEffort as _SDKReasoningEffort

from ..errors import ConfigurationError, ProviderError
from .base import ModelSettings, ToolDefinition

__all__ = [
    "REASONING_EFFORTS",
    "STREAM_BREAKS",
    "ReasoningEffort",
    "add_hint",
    "check_foreign_reasoning",
    "check_reasoning_effort",
    "client_secrets",
    "merge_settings",
    "provider_error",
    "redact",
    "tool_choice_name",
]

ReasoningEffort = Literal["none", "minimal", "low", "medium", "high", "xhigh", "max"]
"""`reasoning_effort` values the `openai` SDK names (a model accepts a subset of them)."""


def _sdk_efforts() -> tuple[str, ...]:
    values: list[str] = []
    for arg in get_args(_SDKReasoningEffort):
        values.extend(a for a in get_args(arg) if isinstance(a, str))
    return tuple(values)


REASONING_EFFORTS: tuple[str, ...] = _sdk_efforts() or get_args(ReasoningEffort)
"""The literal values of the installed SDK's `ReasoningEffort` type."""

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


def check_reasoning_effort(effort: str | None) -> None:
    if effort is not None and effort not in REASONING_EFFORTS:
        raise ConfigurationError(
            f"reasoning_effort must be one of {', '.join(repr(e) for e in REASONING_EFFORTS)}, "
            f"got {effort!r}"
        )


def check_foreign_reasoning(policy: str) -> None:
    if policy not in ("drop", "text"):
        raise ConfigurationError(f"foreign_reasoning must be 'drop' or 'text', got {policy!r}")


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
        kind = "timeout" if isinstance(exc, openai.APITimeoutError) else "connection_error"
        return ProviderError(
            redact(exc.message, secrets), provider=scope, retryable=True, error_type=kind
        )
    if isinstance(exc, openai.APIError):
        status: int | None = getattr(exc, "status_code", None)
        if status == 200:  # an error event inside a stream that had started
            status = None
        error_type = exc.type or exc.code
        message = _body_message(exc.body) or exc.message
        retryable = (error_type in _RETRYABLE_TYPES or exc.code in _RETRYABLE_TYPES) or (
            status is not None and (status in (408, 409, 429) or status >= 500)
        )
        return ProviderError(
            redact(message, secrets),
            provider=scope,
            status=status,
            retryable=retryable,
            error_type=error_type,
        )
    return ProviderError(redact(str(exc), secrets), provider=scope, error_type=type(exc).__name__)


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
