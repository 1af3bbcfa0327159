"""What the OpenAI Chat Completions and Responses wires share: authentication, the native
error bodies (OpenAI's and Azure's), the model families and their reasoning dialects,
``reasoning_effort`` validation, tool parsing and id formats.

Error bodies are OpenAI's ``{"error": {"message", "type", "param", "code"}}``; Azure
answers its own 401 and 429 as ``{"error": {"code", "message"}}`` and passes the model's
errors through in OpenAI's shape. Which flavour a request has is known once
:meth:`OpenAIWire.authenticate` has seen its path; it is kept in a context variable for the rest of
that request (each request runs in its own task), so that framework-level errors (HTTP
faults, invalid JSON) and stream faults use the right flavour without a request at hand.
"""

from __future__ import annotations

import contextvars
import hashlib
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from .framework import JsonReply, WireAPI, WireRequest, request_id, retry_headers
from .model import ToolSpec
from .values import as_list, as_mapping, mapping_or_none

__all__ = [
    "EFFORTS",
    "Dialect",
    "OpenAIError",
    "OpenAIModel",
    "OpenAIWire",
    "RequestContext",
    "brain_effort",
    "check_effort",
    "context",
    "dumps_arguments",
    "error_body",
    "error_reply",
    "hex_id",
    "invalid_value",
    "missing_parameter",
    "model_not_found",
    "openai_model",
    "parse_arguments",
    "stream_error_payload",
    "text_of",
    "tool_choice",
    "tool_spec",
    "uuid_id",
]

#: Every ``reasoning_effort`` value the API knows (``openai.types.shared.ReasoningEffort``).
EFFORTS = ("none", "minimal", "low", "medium", "high", "xhigh", "max")

#: How a model returns its reasoning on Chat Completions.
Dialect = Literal["hidden", "reasoning_content", "reasoning", "think_tags", "none"]

_MISSING_KEY = (
    "You didn't provide an API key. You need to provide your API key in an Authorization header "
    "using Bearer auth (i.e. Authorization: Bearer YOUR_KEY), or as the password field (with "
    "blank username) if you're accessing the API from your browser and are prompted for a "
    "username. You can obtain an API key from https://platform.openai.com/account/api-keys."
)
# https://github.com/SciSharp/BotSharp/issues/386 (the body Azure sends for a missing or bad key)
_AZURE_DENIED = (
    "Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide "
    "a valid key for an active subscription and use a correct regional API endpoint for your "
    "resource."
)

_ERRORS: Mapping[int, tuple[str, str, str | None]] = {
    400: ("invalid_request_error", "Invalid request.", None),
    401: (
        "invalid_request_error",
        "Incorrect API key provided. You can find your API key at "
        "https://platform.openai.com/account/api-keys.",
        "invalid_api_key",
    ),
    403: ("invalid_request_error", "You are not allowed to access this resource.", None),
    404: ("invalid_request_error", "The requested resource was not found.", None),
    409: ("invalid_request_error", "Conflict.", None),
    422: ("invalid_request_error", "Unprocessable entity.", None),
    500: (
        "server_error",
        "The server had an error while processing your request. Sorry about that!",
        None,
    ),
    502: ("server_error", "Bad gateway.", None),
    503: ("server_error", "The server is overloaded or not ready yet.", None),
    504: ("server_error", "Gateway timeout.", None),
}


@dataclass
class RequestContext:
    """What the current request's errors need to know: the Azure flavour and the Azure
    operation name and API version (for its 429 text)."""

    azure: bool = False
    operation: str = "ChatCompletions_Create"
    api_version: str = ""


_CONTEXT: contextvars.ContextVar[RequestContext | None] = contextvars.ContextVar(
    "thinkagent_emulator_openai_request", default=None
)


def context() -> RequestContext:
    """The current request's context (a fresh OpenAI one outside a request)."""
    current = _CONTEXT.get()
    return current if current is not None else RequestContext()


class OpenAIError(Exception):
    """A request the service refuses: status and the fields of its error body.
    ``azure_native`` renders Azure's own ``{"code", "message"}`` body instead."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        type: str = "invalid_request_error",
        param: str | None = None,
        code: str | None = None,
        azure_native: bool = False,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.type = type
        self.param = param
        self.code = code
        self.azure_native = azure_native


def error_body(
    message: str, type: str, param: str | None = None, code: str | None = None
) -> dict[str, Any]:
    """OpenAI's error body."""
    return {"error": {"message": message, "type": type, "param": param, "code": code}}


def _default(status: int, retry_after: float | None) -> tuple[str, str, str | None]:
    if status == 429:
        wait = f"{round(retry_after * 1000)}ms" if retry_after is not None else "1s"
        return (
            "requests",
            "Rate limit reached for requests per min (RPM) in organization org-emulator: "
            f"Limit 500, Used 500, Requested 1. Please try again in {wait}. "
            "Visit https://platform.openai.com/account/rate-limits to learn more.",
            "rate_limit_exceeded",
        )
    if status in _ERRORS:
        return _ERRORS[status]
    if status >= 500:
        return _ERRORS[500]
    return _ERRORS[400]


def error_reply(
    status: int,
    message: str | None = None,
    *,
    retry_after: float | None = None,
    seq: int = 0,
    error: OpenAIError | None = None,
) -> JsonReply:
    """The native error response for the current request's flavour. ``529`` (an
    Anthropic status) is answered as OpenAI's 503."""
    ctx = context()
    if status == 529:
        status = 503
    headers = {"x-request-id": request_id("req_", seq), **retry_headers(retry_after)}
    if ctx.azure:
        headers["apim-request-id"] = _uuid(headers["x-request-id"])
    if error is not None:
        if error.azure_native:
            body: dict[str, Any] = {"error": {"code": error.code, "message": error.message}}
        else:
            body = error_body(error.message, error.type, error.param, error.code)
        return JsonReply(body, error.status, headers)
    if ctx.azure and status in (401, 429):
        if status == 401:
            text = message or _AZURE_DENIED
        else:
            # https://github.com/alex-wolf-ps/dbchatprov2/issues/2 (Azure's 429 wording)
            wait = math.ceil(retry_after) if retry_after is not None else 1
            text = message or (
                f"Requests to the {ctx.operation} Operation under Azure OpenAI API version "
                f"{ctx.api_version or 'v1'} have exceeded token rate limit of your current "
                f"OpenAI S0 pricing tier. Please retry after {wait} seconds. Please go here: "
                "https://aka.ms/oai/quotaincrease if you would like to further increase the "
                "default rate limit."
            )
        return JsonReply({"error": {"code": str(status), "message": text}}, status, headers)
    kind, default, code = _default(status, retry_after)
    return JsonReply(error_body(message or default, kind, None, code), status, headers)


def stream_error_payload(status: int, message: str | None) -> dict[str, Any]:
    """The ``error`` object of an in-stream error for ``status``."""
    if status == 529:
        status = 503
    kind, default, code = _default(status, None)
    return {"message": message or default, "type": kind, "param": None, "code": code}


class OpenAIWire(WireAPI):
    """What both OpenAI wires share: credentials and error bodies, OpenAI's or Azure's."""

    #: The Azure operation named in Azure's 429 text (``ChatCompletions_Create``).
    operation: ClassVar[str]

    def authenticate(self, request: WireRequest) -> JsonReply | None:
        """Record the request's flavour (Azure for ``/openai/...`` paths) and refuse it
        without credentials: OpenAI wants ``Authorization: Bearer``, Azure an ``api-key``
        header or an Entra ID bearer token. Azure's dated routes also need ``api-version``."""
        azure = request.path.startswith("/openai/")
        ctx = RequestContext(
            azure=azure, operation=self.operation, api_version=request.query.get("api-version", "")
        )
        _CONTEXT.set(ctx)
        authorization = request.headers.get("authorization", "")
        if azure:
            if not request.headers.get("api-key") and not authorization.lower().startswith(
                "bearer "
            ):
                return error_reply(401, seq=request.seq)
            if not request.path.startswith("/openai/v1/") and not ctx.api_version:
                return JsonReply(
                    {"error": {"code": "404", "message": "Resource not found"}},
                    404,
                    {"x-request-id": request_id("req_", request.seq)},
                )
            return None
        if not authorization.lower().startswith("bearer ") or not authorization[7:].strip():
            return JsonReply(
                error_body(_MISSING_KEY, "invalid_request_error"),
                401,
                {"x-request-id": request_id("req_", request.seq)},
            )
        return None

    def error(
        self, status: int, message: str | None = None, *, retry_after: float | None = None
    ) -> JsonReply:
        return error_reply(status, message, retry_after=retry_after, seq=self.state.next_seq())

    def method_not_allowed(self, method: str, path: str, allowed: Sequence[str]) -> JsonReply:
        """OpenAI's 405 for a served URL called with another method."""
        return self.error(405, f"Invalid method for URL ({method} {path})")


def _uuid(seed: str) -> str:
    digest = hashlib.sha256(seed.encode()).hexdigest()
    return f"{digest[:8]}-{digest[8:12]}-4{digest[13:16]}-a{digest[17:20]}-{digest[20:32]}"


def hex_id(prefix: str, *parts: str, length: int = 48) -> str:
    """A deterministic id of lower-case hex digits, as the Responses API prints them
    (``resp_68c42d28...``, ``rs_...``, ``fc_...``, ``msg_...``)."""
    digest = hashlib.sha256("\x1f".join(parts).encode()).hexdigest()
    while len(digest) < length:
        digest += hashlib.sha256(digest.encode()).hexdigest()
    return prefix + digest[:length]


def uuid_id(*parts: str) -> str:
    """A deterministic UUID-formatted id (DeepSeek's completion ids)."""
    return _uuid("\x1f".join(parts))


# --- models ----------------------------------------------------------------------------

_OPENAI_RE = re.compile(r"^(?:ft:)?(?:gpt-|o1|o3|o4|chatgpt-|codex-)", re.IGNORECASE)
_NON_REASONING_RE = re.compile(r"^(?:ft:)?(?:gpt-3|gpt-4|gpt-5-chat|chatgpt-)", re.IGNORECASE)
_GPT5_POINT_RE = re.compile(r"^gpt-5\.\d", re.IGNORECASE)
_O_SERIES_RE = re.compile(r"^o[134]", re.IGNORECASE)
_OLLAMA_TAG_RE = re.compile(r"^[\w.\-]+:[\w.\-]+$")


@dataclass(frozen=True)
class OpenAIModel:
    """What the emulator knows about a model name on the OpenAI wires.

    ``family`` names the provider style (``openai``, ``deepseek``, ``qwen``, ``kimi``,
    ``router`` for OpenRouter/Ollama-style names, ``minimax``); ``dialect`` says how the
    reasoning comes back on Chat Completions; ``efforts`` are the ``reasoning_effort``
    values the model accepts (``None``: any valid value); ``default_effort`` applies when
    none is sent (``"none"`` means no reasoning)."""

    name: str
    family: str
    dialect: Dialect
    reasons: bool = True
    default_effort: str = "medium"
    efforts: tuple[str, ...] | None = None


def openai_model(name: str, *, azure: bool = False) -> OpenAIModel | None:
    """The model behind ``name``, or ``None`` when the name is unknown. On Azure the name
    is a deployment: unknown names are served as an OpenAI reasoning model."""
    lower = name.lower()
    if not lower.startswith("ft:") and ("/" in name or _OLLAMA_TAG_RE.match(name)):
        return OpenAIModel(name, "router", "reasoning")  # before gpt-*: `gpt-oss:20b`
    if _OPENAI_RE.match(lower):
        base = lower.removeprefix("ft:")
        if _NON_REASONING_RE.match(base):
            return OpenAIModel(name, "openai", "none", reasons=False, default_effort="none")
        if _GPT5_POINT_RE.match(base):
            return OpenAIModel(name, "openai", "hidden", default_effort="none")
        if _O_SERIES_RE.match(base):
            return OpenAIModel(name, "openai", "hidden", efforts=("low", "medium", "high"))
        if base.startswith("gpt-5"):
            return OpenAIModel(
                name, "openai", "hidden", efforts=("minimal", "low", "medium", "high")
            )
        return OpenAIModel(name, "openai", "hidden")
    if lower.startswith("deepseek-"):
        if lower == "deepseek-chat":
            return OpenAIModel(name, "deepseek", "reasoning_content", reasons=False)
        return OpenAIModel(name, "deepseek", "reasoning_content")
    if lower.startswith(("qwen", "qwq-")):
        return OpenAIModel(name, "qwen", "reasoning_content")
    if lower.startswith(("kimi-", "moonshot-")):
        return OpenAIModel(name, "kimi", "reasoning_content")
    if lower.startswith("minimax-"):
        return OpenAIModel(name, "minimax", "think_tags")
    if azure:
        return OpenAIModel(name, "openai", "hidden")
    return None


def model_not_found(name: str) -> OpenAIError:
    """OpenAI's 404 for an unknown model."""
    return OpenAIError(
        404,
        f"The model `{name}` does not exist or you do not have access to it.",
        code="model_not_found",
    )


def _quoted_list(values: Sequence[str]) -> str:
    quoted = [f"'{v}'" for v in values]
    if len(quoted) <= 2:
        return " and ".join(quoted)
    return ", ".join(quoted[:-1]) + ", and " + quoted[-1]


def invalid_value(value: Any, supported: Sequence[str], param: str) -> OpenAIError:
    """OpenAI's 400 for a value outside an enum."""
    return OpenAIError(
        400,
        f"Invalid value: '{value}'. Supported values are: {_quoted_list(supported)}.",
        param=param,
        code="invalid_value",
    )


def missing_parameter(param: str) -> OpenAIError:
    """OpenAI's 400 for a required parameter that is absent."""
    return OpenAIError(
        400,
        f"Missing required parameter: '{param}'.",
        param=param,
        code="missing_required_parameter",
    )


def check_effort(model: OpenAIModel, effort: Any, param: str) -> str | None:
    """Validate a ``reasoning_effort`` (Chat) or ``reasoning.effort`` (Responses) value
    and return the effective effort (``None`` when the model does not reason)."""
    if effort is None:
        return model.default_effort if model.reasons else None
    if effort not in EFFORTS:
        raise invalid_value(effort, EFFORTS, param)
    if model.family == "openai" and not model.reasons:
        raise OpenAIError(
            400,
            f"Unsupported parameter: '{param}' is not supported with this model.",
            param=param,
            code="unsupported_parameter",
        )
    if model.efforts is not None and effort not in model.efforts:
        # the wording of https://github.com/Kilo-Org/cloud/pull/3807
        raise OpenAIError(
            400,
            f"Unsupported value: '{param}' does not support '{effort}' with this model. "
            f"Supported values are: {_quoted_list(model.efforts)}.",
            param=param,
            code="unsupported_value",
        )
    return str(effort) if model.reasons else None


def brain_effort(effort: str | None) -> tuple[bool, str | None]:
    """(thinking on, the brain's effort) for an effective OpenAI effort."""
    if effort is None or effort == "none":
        return False, None
    return True, "low" if effort == "minimal" else effort


# --- request helpers -------------------------------------------------------------------


def text_of(content: Any) -> str:
    """The text of a message content: a string, or the text of its text parts
    (``text``, ``input_text``, ``output_text``)."""
    if isinstance(content, str):
        return content
    texts: list[str] = []
    for part in as_list(content):
        block = mapping_or_none(part)
        if block is not None and isinstance(block.get("text"), str):
            texts.append(block["text"])
        elif isinstance(part, str):
            texts.append(part)
    return "\n".join(texts)


def parse_arguments(raw: Any) -> Mapping[str, Any]:
    """A function call's ``arguments`` (a JSON text) as an object (empty if invalid)."""
    if isinstance(raw, Mapping):
        return as_mapping(raw)
    if isinstance(raw, str):
        try:
            parsed = json.loads(raw)
        except ValueError:
            return {}
        return as_mapping(parsed)
    return {}


def tool_choice(
    raw: Any, *, nested: bool
) -> tuple[Literal["auto", "any", "tool", "none"], str | None]:
    """The brain's (tool choice, tool name) for a ``tool_choice``: ``auto``, ``none``,
    ``required`` or a function (Chat nests its name in ``function``: ``nested``)."""
    if raw is None or raw == "auto":
        return "auto", None
    if raw == "none":
        return "none", None
    if raw == "required":
        return "any", None
    choice = mapping_or_none(raw)
    if choice is not None and choice.get("type") == "function":
        name = (as_mapping(choice.get("function")) if nested else choice).get("name")
        if isinstance(name, str):
            return "tool", name
        raise missing_parameter("tool_choice.function.name" if nested else "tool_choice.name")
    if isinstance(raw, str):
        raise invalid_value(raw, ("none", "auto", "required"), "tool_choice")
    return "auto", None


def tool_spec(name: Any, description: Any, parameters: Any) -> ToolSpec:
    """A neutral tool from a function tool's fields."""
    return ToolSpec(
        name=str(name),
        description=description if isinstance(description, str) else "",
        schema=as_mapping(parameters),
    )


def dumps_arguments(arguments: Mapping[str, Any]) -> str:
    """Call arguments as the JSON text the API sends (``{"city": "Paris"}``)."""
    return json.dumps(dict(arguments), ensure_ascii=False)
