"""The OpenAI rules: what the Chat Completions and Responses wires share: credentials, the
native error bodies (OpenAI's and Azure's), the model profiles and their reasoning
dialects, ``reasoning_effort`` validation and tool parsing.

Error bodies are OpenAI's ``{"error": {"message", "type", "param", "code"}}``; Azure
answers its own 401 and 429 as ``{"error": {"code", "message"}}`` and passes the model's
errors through in OpenAI's shape. Which flavour a request has is known from its path
(Azure's routes start with ``/openai/``), which :meth:`OpenAIWire.error` gets with every
refusal it renders.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from ..encoding import as_list, as_mapping, b64decode, mapping_or_none, request_id, uuid_id
from ..framework import BodyLimit, JsonReply, WireAPI, WireError, WireRequest
from ..model import Media, ToolSpec

__all__ = [
    "EFFORTS",
    "IMAGE_TYPES",
    "KNOBS",
    "AzureError",
    "OpenAIError",
    "OpenAIProfile",
    "OpenAIWire",
    "ReasoningDialect",
    "brain_effort",
    "check_effort",
    "credential",
    "file_media",
    "image_media",
    "invalid_value",
    "is_azure",
    "missing_parameter",
    "model_not_found",
    "openai_profile",
    "parse_arguments",
    "stream_error_payload",
    "text_of",
    "tool_choice",
    "tool_spec",
]

#: Every ``reasoning_effort`` value the API knows (``openai.types.shared.ReasoningEffort``).
EFFORTS = ("none", "minimal", "low", "medium", "high", "xhigh", "max")

#: How a model returns its reasoning on Chat Completions.
ReasoningDialect = Literal[
    "hidden",
    "reasoning_content",
    "reasoning",
    "think_tags",
    "reasoning_details",
    "content_chunks",
    "none",
]

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


class OpenAIError(WireError):
    """A refusal in OpenAI's error shape, with its ``type``, ``param`` and ``code`` (the
    model's errors, which Azure passes through as they are)."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        type: str = "invalid_request_error",
        param: str | None = None,
        code: str | None = None,
    ) -> None:
        super().__init__(status, message, type=type)
        self.body = _error_body(message, type, param, code)


class AzureError(WireError):
    """A refusal in Azure's own shape, ``{"error": {"code", "message"}}``: the 404 of a
    dated route without ``api-version``, and its gateway's 401 and 429 (which a plain
    :class:`WireError` of those statuses on an Azure route gets too)."""


def is_azure(request: WireRequest) -> bool:
    """Whether ``request`` came on an Azure route (``/openai/...``)."""
    return request.path.startswith("/openai/")


def _error_body(
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


def stream_error_payload(error: WireError) -> dict[str, Any]:
    """The ``error`` object of an in-stream error."""
    status = 503 if error.status == 529 else error.status
    kind, default, code = _default(status, None)
    return {"message": error.message or default, "type": kind, "param": None, "code": code}


def credential(request: WireRequest) -> str:
    """Who asks: the request's bearer token or Azure key (prompt caches are per account)."""
    return request.headers.get("authorization") or request.headers.get("api-key") or ""


class OpenAIWire(WireAPI):
    """What both OpenAI wires share: credentials and error bodies, OpenAI's or Azure's."""

    #: The Azure operation named in Azure's 429 text (``ChatCompletions_Create``).
    operation: ClassVar[str]
    # OpenAI documents up to 50 MB of image bytes per request
    # (https://platform.openai.com/docs/guides/images-vision), no other body limit.
    body_limit: ClassVar[BodyLimit] = BodyLimit(
        50 * 2**20, 413, "The request body exceeds the maximum size of {limit} bytes."
    )

    def authenticate(self, request: WireRequest) -> None:
        """Refuse a request without credentials: OpenAI wants ``Authorization: Bearer``,
        Azure (``/openai/...`` paths) an ``api-key`` header or an Entra ID bearer token.
        Azure's dated routes also need ``api-version``."""
        authorization = request.headers.get("authorization", "")
        bearer = authorization.lower().startswith("bearer ")
        if is_azure(request):
            if not request.headers.get("api-key") and not bearer:
                raise AzureError(401)
            if not request.path.startswith("/openai/v1/") and not request.query.get("api-version"):
                raise AzureError(404, "Resource not found")
        elif not bearer or not authorization[7:].strip():
            raise OpenAIError(401, _MISSING_KEY)

    def error(self, request: WireRequest, error: WireError) -> JsonReply:
        """OpenAI's error body, or Azure's own for its gateway's refusals. ``529`` (an
        Anthropic status) is answered as OpenAI's 503."""
        azure = is_azure(request)
        status = 503 if error.status == 529 else error.status
        headers = {"x-request-id": request_id("req_", request.seq)}
        if azure:
            headers["apim-request-id"] = uuid_id(headers["x-request-id"])
        if isinstance(error, OpenAIError):
            body = error.body
        elif isinstance(error, AzureError) or (azure and status in (401, 429)):
            text = error.message or self._azure_message(request, status, error.retry_after)
            body = {"error": {"code": str(status), "message": text}}
        else:
            kind, default, code = _default(status, error.retry_after)
            body = _error_body(error.message or default, kind, None, code)
        return JsonReply(body, status, headers)

    def _azure_message(self, request: WireRequest, status: int, retry_after: float | None) -> str:
        if status == 401:
            return _AZURE_DENIED
        if status != 429:
            return _default(status, retry_after)[1]
        # https://github.com/alex-wolf-ps/dbchatprov2/issues/2 (Azure's 429 wording)
        wait = math.ceil(retry_after) if retry_after is not None else 1
        api_version = request.query.get("api-version")
        return (
            f"Requests to the {self.operation} Operation under Azure OpenAI API version "
            f"{api_version or 'v1'} have exceeded token rate limit of your current "
            f"OpenAI S0 pricing tier. Please retry after {wait} seconds. Please go here: "
            "https://aka.ms/oai/quotaincrease if you would like to further increase the "
            "default rate limit."
        )

    def method_not_allowed(self, request: WireRequest, allowed: Sequence[str]) -> WireError:
        """OpenAI's 405 for a served URL called with another method."""
        return WireError(405, f"Invalid method for URL ({request.method} {request.path})")


# --- models ----------------------------------------------------------------------------

_OPENAI_RE = re.compile(r"^(?:ft:)?(?:gpt-|o1|o3|o4|chatgpt-|codex-)", re.IGNORECASE)
_NON_REASONING_RE = re.compile(r"^(?:ft:)?(?:gpt-3|gpt-4|gpt-5-chat|chatgpt-)", re.IGNORECASE)
_GPT5_POINT_RE = re.compile(r"^gpt-5\.\d", re.IGNORECASE)
_O_SERIES_RE = re.compile(r"^o[134]", re.IGNORECASE)
_OLLAMA_TAG_RE = re.compile(r"^[\w.\-]+:[\w.\-]+$")


@dataclass(frozen=True)
class OpenAIProfile:
    """What the emulator knows about a model name on the OpenAI wires.

    ``family`` names the provider style (``openai``, ``deepseek``, ``qwen``, ``kimi``,
    ``zai``, ``mistral``, ``xai``, ``minimax``, ``router`` for OpenRouter's
    ``vendor/model`` names (``vendor`` says whose model it is), ``ollama`` for Ollama tags,
    and the hosts a dialect knob picks: ``vllm``, ``groq``, ``cerebras``, ``together``);
    ``dialect`` says how the reasoning comes back on Chat Completions; ``efforts`` are the
    ``reasoning_effort`` values the model accepts (``None``: any valid value);
    ``default_effort`` applies when none is sent (``"none"`` means no reasoning)."""

    name: str
    family: str
    dialect: ReasoningDialect
    reasons: bool = True
    default_effort: str = "medium"
    efforts: tuple[str, ...] | None = None
    vendor: str | None = None


#: The dialect knob of the emulator's OpenAI routes (``/{dialect}/v1/chat/completions``):
#: the family it serves whatever the model name, and how its reasoning comes back.
KNOBS: Mapping[str, tuple[str, ReasoningDialect]] = {
    "vllm": ("vllm", "reasoning"),
    "sglang": ("vllm", "reasoning"),
    "openrouter": ("router", "reasoning_details"),
    "deepseek": ("deepseek", "reasoning_content"),
    "moonshot": ("kimi", "reasoning_content"),
    "kimi": ("kimi", "reasoning_content"),
    "zai": ("zai", "reasoning_content"),
    "mistral": ("mistral", "content_chunks"),
    "xai": ("xai", "reasoning_content"),
    "qwen": ("qwen", "reasoning_content"),
    "minimax": ("minimax", "think_tags"),
    "groq": ("groq", "reasoning"),
    "cerebras": ("cerebras", "reasoning"),
    "together": ("together", "reasoning"),
    "fireworks": ("fireworks", "reasoning_content"),
    "ollama": ("ollama", "reasoning"),
    # LM Studio's open Responses server (vercel/ai packages/open-responses fixtures) and
    # Bedrock Mantle (docs.aws.amazon.com/bedrock/latest/userguide/bedrock-mantle.html)
    "lmstudio": ("lmstudio", "reasoning"),
    "mantle": ("mantle", "reasoning"),
}


def openai_profile(
    name: str, *, azure: bool = False, knob: str | None = None
) -> OpenAIProfile | None:
    """The model behind ``name``, or ``None`` when the name (or the knob) is unknown. On
    Azure the name is a deployment: unknown names are served as an OpenAI reasoning model.
    A dialect ``knob`` (a route prefix) serves any name in that host's dialect."""
    lower = name.lower()
    if knob is not None:
        found = KNOBS.get(knob.lower())
        if found is None:
            return None
        family, dialect = found
        vendor = lower.split("/", 1)[0] if family == "router" and "/" in lower else None
        if family == "together" and lower.startswith("zai-org/glm-5.3"):
            dialect = "reasoning_content"  # GLM-5.3 on Together (its quickstart)
        return OpenAIProfile(
            name, family, dialect, vendor=vendor, efforts=_host_efforts(family, lower)
        )
    if not lower.startswith("ft:") and "/" in name:
        return OpenAIProfile(name, "router", "reasoning_details", vendor=lower.split("/", 1)[0])
    if not lower.startswith("ft:") and _OLLAMA_TAG_RE.match(name):
        return OpenAIProfile(name, "ollama", "reasoning")  # before gpt-*: `gpt-oss:20b`
    if _OPENAI_RE.match(lower):
        base = lower.removeprefix("ft:")
        if _NON_REASONING_RE.match(base):
            return OpenAIProfile(name, "openai", "none", reasons=False, default_effort="none")
        if _GPT5_POINT_RE.match(base):
            return OpenAIProfile(name, "openai", "hidden", default_effort="none")
        if _O_SERIES_RE.match(base):
            return OpenAIProfile(name, "openai", "hidden", efforts=("low", "medium", "high"))
        if base.startswith("gpt-5"):
            return OpenAIProfile(
                name, "openai", "hidden", efforts=("minimal", "low", "medium", "high")
            )
        return OpenAIProfile(name, "openai", "hidden")
    if lower.startswith("deepseek-"):
        if lower == "deepseek-chat":
            return OpenAIProfile(name, "deepseek", "reasoning_content", reasons=False)
        return OpenAIProfile(name, "deepseek", "reasoning_content")
    if lower.startswith(("qwen", "qwq-")):
        return OpenAIProfile(name, "qwen", "reasoning_content")
    if lower.startswith(("kimi-", "moonshot-")):
        return OpenAIProfile(name, "kimi", "reasoning_content")
    if lower.startswith("glm-"):
        efforts = ("low", "high", "max") if lower.startswith(("glm-5.2", "glm-5.3")) else None
        return OpenAIProfile(name, "zai", "reasoning_content", efforts=efforts)
    if lower.startswith("zai-glm-"):  # Cerebras's name for GLM
        return OpenAIProfile(name, "cerebras", "reasoning")
    if lower.startswith("magistral-"):
        return OpenAIProfile(name, "mistral", "content_chunks")
    if lower.startswith(("mistral-", "devstral-", "ministral-")):
        # adjustable reasoning: off unless reasoning_effort asks for it
        return OpenAIProfile(name, "mistral", "content_chunks", default_effort="none")
    if lower.startswith("grok-"):
        return OpenAIProfile(name, "xai", "reasoning_content", efforts=_host_efforts("xai", lower))
    if lower.startswith("minimax-"):
        return OpenAIProfile(name, "minimax", "think_tags")
    if azure:
        return OpenAIProfile(name, "openai", "hidden")
    return None


def _host_efforts(family: str, lower: str) -> tuple[str, ...] | None:
    """The ``reasoning_effort`` values a compatible host's model takes, where its docs give a
    table (None: any valid value): xAI (docs.x.ai; grok-4.3 none to high, grok-4.5 low to high,
    grok-3-mini low or high), Groq (gpt-oss low to high; Qwen 3 is checked on its own)."""
    if family == "xai":
        if lower.startswith("grok-4.5"):
            return ("low", "medium", "high")
        if lower.startswith("grok-3-mini"):
            return ("low", "high")
        return ("none", "low", "medium", "high")
    if family == "groq" and "gpt-oss" in lower:
        return ("low", "medium", "high")
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


def check_effort(model: OpenAIProfile, effort: Any, param: str) -> str | None:
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
        except (ValueError, RecursionError):
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


# --- media -------------------------------------------------------------------------------

#: Image formats the vision models take (developers.openai.com/api/docs/guides/images-vision).
IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
#: The size limit of one image.
MAX_IMAGE_BYTES = 20 * 1024 * 1024
_DATA_URL = re.compile(
    r"^data:(?P<type>[\w.+-]+/[\w.+-]+)(?:;[\w=.-]+)*;base64,(?P<data>.*)$", re.S
)


def image_media(url: Any, param: str) -> Media:
    """The image an ``image_url`` (Chat) or ``input_image`` (Responses) names: a data URL's
    type and size, or the URL itself. An image of another format, or over 20 MB, is refused
    with the service's 400 (its two wordings, as users quote them)."""
    if not isinstance(url, str) or not url:
        raise missing_parameter(param)
    if not url.startswith("data:"):
        return Media("image", "image/*", url=url)
    media_type, size = _data_url(url, param)
    if media_type not in IMAGE_TYPES or size > MAX_IMAGE_BYTES:
        limit = "is below 20 MB in size and is" if size > MAX_IMAGE_BYTES else "has"
        raise OpenAIError(
            400,
            f"You uploaded an unsupported image. Please make sure your image {limit} of one the "
            "following formats: ['png', 'jpeg', 'gif', 'webp'].",
            param=param,
            code="invalid_image_format",
        )
    return Media("image", media_type, size)


def file_media(file: Mapping[str, Any], param: str) -> Media:
    """The document a ``file`` part (Chat) or ``input_file`` item (Responses) carries: its
    ``file_data`` (a data URL), ``file_url`` or ``file_id``."""
    data = file.get("file_data")
    if isinstance(data, str) and data:
        media_type, size = _data_url(data, f"{param}.file_data")
        return Media("document", media_type, size)
    for key in ("file_url", "file_id"):
        value = file.get(key)
        if isinstance(value, str) and value:
            return Media("document", "application/octet-stream", url=value)
    raise missing_parameter(f"{param}.file_data")


def _data_url(url: str, param: str) -> tuple[str, int]:
    """(media type, byte size) of a base64 data URL; the service's 400 when it is not one."""
    match = _DATA_URL.match(url)
    raw = b64decode(match.group("data")) if match is not None else None
    if match is None or raw is None:
        raise OpenAIError(
            400,
            f"Invalid '{param}'. Expected a base64-encoded data URL with a MIME type (e.g. "
            "'data:image/png;base64,aW1nIGJ5dGVzIGhlcmU='), but got an invalid value.",
            param=param,
            code="invalid_value",
        )
    return match.group("type").lower(), len(raw)
