"""AWS Bedrock Converse: ``POST /model/{modelId}/converse`` (JSON) and
``/converse-stream`` (binary ``application/vnd.amazon.eventstream``).

Requests must carry an ``Authorization`` header (SigV4 with any credentials; the
signature is not checked; its access key is the account, its credential scope the region).
Claude models (``anthropic.claude-*``, also with a region prefix such as ``us.`` or
``global.``, or as an inference-profile ARN) are served: the Converse request is translated to
the Anthropic Messages shape and validated by :mod:`thinkagent.emulator.claude.rules` on the
``bedrock`` platform (Claude's proofs are valid on both platforms, gated by model, prefix and
account). Claude's errors come back as ``ValidationException`` (HTTP 400, ``x-amzn-ErrorType``
header, ``{"message": ...}``) reading "The model returned the following errors: <Claude's
message>". Claude's ``input_transformations`` come back in ``additionalModelResponseFields``
when ``additionalModelResponseFieldPaths`` asks for ``/input_transformations``. Images and
documents take bytes only (3.75 MB per image, 4.5 MB per document, a document ``name`` of
letters, digits, single spaces, hyphens, parentheses and brackets).

The other families Converse serves (DeepSeek, OpenAI's gpt-oss and GPT-5 models, Kimi, xAI,
Qwen...) answer in their own reasoning shapes with their own refusals (:mod:`.families`).

Streams follow the service: no ``contentBlockStart`` for reasoning or text blocks;
reasoning text deltas, then a separate ``signature`` delta (or one ``redactedContent``
delta); ``toolUse`` blocks open with ``contentBlockStart`` and stream their input as JSON
fragments; then ``messageStop`` and ``metadata`` (usage and metrics).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, cast

from ..caching import CacheUse, PrefixCache
from ..encoding import (
    as_list,
    as_mapping,
    b64decode,
    chunk_text,
    mapping_or_none,
    request_id,
    split_json,
    stable_id,
)
from ..eventstream import event_message, exception_message
from ..framework import (
    BodyLimit,
    EmulatorState,
    JsonReply,
    StreamReply,
    WireAPI,
    WireError,
    WireRequest,
    WireRoute,
)
from ..model import Reply, StopReason
from .bodies import check_bedrock
from .families import family_of, parse_family_request, render_family
from .profiles import claude_profile
from .rules import ClaudeBlock, ClaudeRequest, parse_request, render_blocks
from .system import TOOL_CHANGES_BETA

__all__ = ["BedrockAPI", "claude_name"]

SCOPE = "bedrock"
#: maxTokens when the request has no ``inferenceConfig.maxTokens``.
DEFAULT_MAX_TOKENS = 8192
_ERROR_NS = ":http://internal.amazon.com/coral/com.amazon.bedrock/"
_MEDIA_TYPE = "application/vnd.amazon.eventstream"
_INVALID_MODEL = "The provided model identifier is invalid."
_NO_CACHING = (
    "You invoked an unsupported model or your request did not allow prompt caching. See the "
    "documentation for more information."
)

_ERRORS: Mapping[int, tuple[str, str]] = {
    400: (
        "ValidationException",
        "Malformed input request, please reformat your input and try again.",
    ),
    403: (
        "AccessDeniedException",
        "You don't have access to the model with the specified model ID.",
    ),
    404: ("ResourceNotFoundException", "The requested resource could not be found."),
    408: (
        "ModelTimeoutException",
        "Model has timed out in processing the request. Try your request again.",
    ),
    424: ("ModelErrorException", "The model encountered an error processing the request."),
    429: ("ThrottlingException", "Too many requests, please wait before trying again."),
    500: (
        "InternalServerException",
        "The system encountered an unexpected error during processing. Try your request again.",
    ),
    503: ("ServiceUnavailableException", "Bedrock is unable to process your request."),
}
_STREAM_ERRORS: Mapping[int, str] = {
    400: "validationException",
    429: "throttlingException",
    500: "internalServerException",
    503: "serviceUnavailableException",
}
_STOP: Mapping[StopReason, str] = {
    "end_turn": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "stop_sequence": "stop_sequence",
    "refusal": "content_filtered",
}
_REGION_PREFIX = re.compile(r"^(?:us|eu|apac|ap|jp|au|ca|global|us-gov)\.")
_VERSION_SUFFIX = re.compile(r"-v\d+(?::\d+)?$")


def claude_name(model_id: str) -> str | None:
    """The Claude model name behind a Bedrock model id (``us.anthropic.claude-sonnet-4-5-
    20250929-v1:0`` -> ``claude-sonnet-4-5-20250929``), or ``None`` for other models."""
    model = model_id.rsplit("/", 1)[-1] if model_id.startswith("arn:") else model_id
    model = _REGION_PREFIX.sub("", model)
    if not model.startswith("anthropic.claude-"):
        return None
    return _VERSION_SUFFIX.sub("", model[len("anthropic.") :])


def _error_kind(status: int) -> tuple[int, str, str]:
    if status == 529:
        status = 503
    if status in _ERRORS:
        code, message = _ERRORS[status]
        return status, code, message
    if status >= 500:
        return status, "InternalServerException", _ERRORS[500][1]
    return status, "ValidationException", _ERRORS[400][1]


_IMAGE_FORMATS = ("png", "jpeg", "gif", "webp")
_DOCUMENT_FORMATS: Mapping[str, str] = {
    "pdf": "application/pdf",
    "csv": "text/csv",
    "doc": "application/msword",
    "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    "xls": "application/vnd.ms-excel",
    "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    "html": "text/html",
    "txt": "text/plain",
    "md": "text/markdown",
}
_MAX_IMAGE_BYTES = 3_750_000
_MAX_DOCUMENT_BYTES = 4_500_000
_DOCUMENT_NAME = re.compile(r"^(?:[A-Za-z0-9\-()\[\]]|\s(?!\s))+$")


def _media(kind: str, block: Mapping[str, Any], where: str) -> dict[str, Any]:
    """A Converse ``image`` or ``document`` block as an Anthropic one (the brain reads the
    media type and size), refused as Converse refuses it."""
    fmt = block.get("format")
    source = as_mapping(block.get("source"))
    if "bytes" not in source:
        raise WireError(400, f"The value at {where}.source is invalid: give the bytes.")
    data = source["bytes"]
    size = len(b64decode(data) or b"") if isinstance(data, str) else 0
    if kind == "image":
        if fmt not in _IMAGE_FORMATS:
            raise WireError(400, f"The value at {where}.format is invalid.")
        if size > _MAX_IMAGE_BYTES:
            raise WireError(400, f"The image at {where} exceeds the maximum size of 3.75 MB.")
        media_type = f"image/{fmt}"
    else:
        if fmt not in _DOCUMENT_FORMATS:
            raise WireError(400, f"The value at {where}.format is invalid.")
        if size > _MAX_DOCUMENT_BYTES:
            raise WireError(400, f"The document at {where} exceeds the maximum size of 4.5 MB.")
        name = block.get("name")
        if not isinstance(name, str) or not _DOCUMENT_NAME.match(name):
            raise WireError(
                400,
                f"The value at {where}.name is invalid: a document name may contain only "
                "alphanumeric characters, whitespace characters (no more than one in a row), "
                "hyphens, parentheses and square brackets.",
            )
        media_type = _DOCUMENT_FORMATS[cast("str", fmt)]
    return {"type": kind, "source": {"type": "base64", "media_type": media_type, "data": data}}


def _tool_result(result: Mapping[str, Any], where: str) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    for position, item in enumerate(as_list(result.get("content"))):
        part = as_mapping(item)
        if isinstance(part.get("text"), str):
            content.append({"type": "text", "text": part["text"]})
        elif "json" in part:
            content.append({"type": "text", "text": json.dumps(part["json"], ensure_ascii=False)})
        elif "image" in part or "document" in part:
            kind = "image" if "image" in part else "document"
            content.append(
                _media(kind, as_mapping(part[kind]), f"{where}.content.{position}.{kind}")
            )
        else:
            kind = next(iter(part), "content")
            content.append({"type": "text", "text": f"[{kind}]"})
    return {
        "type": "tool_result",
        "tool_use_id": result.get("toolUseId"),
        "content": content,
        "is_error": result.get("status") == "error",
    }


def _check_ids(block: Mapping[str, Any], index: int, position: int) -> None:
    """``toolUse.toolUseId``, ``toolUse.name`` and ``toolResult.toolUseId`` are strings."""
    for kind, keys in (("toolUse", ("toolUseId", "name")), ("toolResult", ("toolUseId",))):
        if kind not in block:
            continue
        inner = as_mapping(block[kind])
        for key in keys:
            if not isinstance(inner.get(key), str):
                raise WireError(
                    400,
                    f"The value at messages.{index}.content.{position}.{kind}.{key} is invalid.",
                )


def _to_claude(body: Mapping[str, Any], model_name: str) -> dict[str, Any]:
    """Translate a Converse request into an Anthropic Messages request, keeping the
    message and block indices (``cachePoint`` markers are dropped, as the service folds
    them into the previous block)."""
    raw_messages = body.get("messages")
    if not isinstance(raw_messages, list) or not raw_messages:
        raise WireError(
            400,
            "A conversation must start with a user message. Try again with a conversation that starts with a user message.",
        )
    system: list[dict[str, Any]] = []
    for raw_block in as_list(body.get("system")):
        block = as_mapping(raw_block)
        if isinstance(block.get("text"), str):
            system.append({"type": "text", "text": block["text"]})
        elif "cachePoint" in block:
            _mark(system, block["cachePoint"])
    messages: list[dict[str, Any]] = []
    for index, item in enumerate(cast("list[Any]", raw_messages)):
        message = as_mapping(item)
        role = message.get("role")
        if role not in ("user", "assistant", "system"):
            raise WireError(400, f"The value at messages.{index}.role is invalid.")
        content: list[dict[str, Any]] = []
        for position, raw_block in enumerate(as_list(message.get("content"))):
            block = as_mapping(raw_block)
            _check_ids(block, index, position)
            if "text" in block:
                content.append({"type": "text", "text": block["text"]})
            elif "toolUse" in block:
                use = as_mapping(block["toolUse"])
                content.append(
                    {
                        "type": "tool_use",
                        "id": use.get("toolUseId"),
                        "name": use.get("name"),
                        "input": use.get("input", {}),
                    }
                )
            elif "toolResult" in block:
                where = f"messages.{index}.content.{position}.toolResult"
                content.append(_tool_result(as_mapping(block["toolResult"]), where))
            elif "image" in block or "document" in block:
                kind = "image" if "image" in block else "document"
                where = f"messages.{index}.content.{position}.{kind}"
                content.append(_media(kind, as_mapping(block[kind]), where))
            elif "reasoningContent" in block:
                reasoning = as_mapping(block["reasoningContent"])
                if "redactedContent" in reasoning:
                    content.append(
                        {"type": "redacted_thinking", "data": reasoning["redactedContent"]}
                    )
                else:
                    text_block = as_mapping(reasoning.get("reasoningText"))
                    thinking: dict[str, Any] = {"type": "thinking"}
                    if "text" in text_block:
                        thinking["thinking"] = text_block["text"]
                    if "signature" in text_block:
                        thinking["signature"] = text_block["signature"]
                    content.append(thinking)
            elif "cachePoint" in block:
                _mark(content, block["cachePoint"])
            elif "toolAddition" in block or "toolRemoval" in block:
                kind = "toolAddition" if "toolAddition" in block else "toolRemoval"
                tool = as_mapping(as_mapping(block[kind]).get("tool"))
                reference = {"type": tool.get("type", "tool_reference"), "name": tool.get("name")}
                change = "tool_addition" if kind == "toolAddition" else "tool_removal"
                content.append({"type": change, "tool": reference})
            else:
                kind = next(iter(block), "content")
                content.append({"type": "text", "text": f"[{kind}]"})
        # A system message stays in `messages`, where it stands: Claude reads it as one.
        messages.append({"role": role, "content": content})
    if as_mapping(raw_messages[0]).get("role") != "user":
        raise WireError(
            400,
            "A conversation must start with a user message. Try again with a conversation that starts with a user message.",
        )

    inference = as_mapping(body.get("inferenceConfig"))
    extra = as_mapping(body.get("additionalModelRequestFields"))
    claude: dict[str, Any] = {
        "model": model_name,
        "max_tokens": inference.get("maxTokens", DEFAULT_MAX_TOKENS),
        "messages": messages,
    }
    if system:
        claude["system"] = system
    tool_config = as_mapping(body.get("toolConfig"))
    tools: list[dict[str, Any]] = []
    for raw_tool in as_list(tool_config.get("tools")):
        spec = as_mapping(as_mapping(raw_tool).get("toolSpec"))
        if "cachePoint" in as_mapping(raw_tool):
            _mark(tools, as_mapping(raw_tool)["cachePoint"])
        elif spec:
            tools.append(
                {
                    "name": spec.get("name"),
                    "description": spec.get("description", ""),
                    "input_schema": as_mapping(spec.get("inputSchema")).get("json"),
                }
            )
    if tools:
        claude["tools"] = tools
    choice = as_mapping(tool_config.get("toolChoice"))
    if "any" in choice:
        claude["tool_choice"] = {"type": "any"}
    elif "tool" in choice:
        claude["tool_choice"] = {"type": "tool", "name": as_mapping(choice["tool"]).get("name")}
    if "thinking" in extra:
        claude["thinking"] = extra["thinking"]
    effort = as_mapping(body.get("outputConfig")).get("effort") or as_mapping(
        extra.get("output_config")
    ).get("effort")
    output: dict[str, Any] = {}
    if effort is not None:
        output["effort"] = effort
    text_format = as_mapping(as_mapping(body.get("outputConfig")).get("textFormat"))
    if text_format:
        schema = as_mapping(as_mapping(text_format.get("structure")).get("jsonSchema")).get(
            "schema"
        )
        try:
            loaded = json.loads(schema) if isinstance(schema, str) else None
        except ValueError:
            loaded = None
        if not isinstance(loaded, dict):
            raise WireError(
                400, "The value at outputConfig.textFormat.structure.jsonSchema.schema is invalid."
            )
        output["format"] = {"type": "json_schema", "schema": loaded}
    if output:
        claude["output_config"] = output
    return claude


def _cache_points(body: Mapping[str, Any]) -> bool:
    """Whether a Converse request has a ``cachePoint`` anywhere it may sit."""
    lists = [as_list(body.get("system")), as_list(as_mapping(body.get("toolConfig")).get("tools"))]
    lists += [as_list(as_mapping(m).get("content")) for m in as_list(body.get("messages"))]
    return any("cachePoint" in as_mapping(block) for blocks in lists for block in blocks)


def _caches(name: str | None) -> bool:
    """Whether Bedrock caches prompts for this Claude model (Claude 3.5 Haiku, 3.7 Sonnet and
    newer; not the other families Converse serves)."""
    profile = claude_profile(name or "")
    if profile is None:
        return False
    if profile.family not in ("opus", "sonnet", "haiku"):
        return True
    return profile.version >= (3, 7) or (profile.family, profile.version) == ("haiku", (3, 5))


def _mark(blocks: list[dict[str, Any]], cache_point: Any) -> None:
    """A ``cachePoint`` ends the cacheable prefix at the block before it: Claude reads it as
    that block's ``cache_control`` (a point with nothing before it marks nothing)."""
    if not blocks:
        return
    point = as_mapping(cache_point)
    kind = point.get("type")
    marker: dict[str, Any] = {"type": "ephemeral" if kind == "default" else kind}
    if "ttl" in point:
        marker["ttl"] = point["ttl"]
    blocks[-1] = {**blocks[-1], "cache_control": marker}


def _usage(reply: Reply, cached: CacheUse) -> dict[str, Any]:
    """Converse's counts: ``inputTokens`` are those neither read from the cache nor written
    to it; ``cacheDetails`` splits the written ones by lifetime."""
    usage = reply.usage
    assert usage is not None
    read, written = cached.read_tokens, cached.write_tokens
    out: dict[str, Any] = {
        "inputTokens": usage.input_tokens - read - written,
        "outputTokens": usage.output_tokens,
        "totalTokens": usage.input_tokens + usage.output_tokens,
        "cacheReadInputTokens": read,
        "cacheWriteInputTokens": written,
        "cacheReadInputTokenCount": read,
        "cacheWriteInputTokenCount": written,
    }
    if cached.writes:
        lifetimes: dict[str, int] = {}
        for ttl, tokens in cached.writes:
            name = "1h" if ttl > 300 else "5m"
            lifetimes[name] = lifetimes.get(name, 0) + tokens
        out["cacheDetails"] = [{"ttl": t, "inputTokens": n} for t, n in lifetimes.items()]
    return out


def _latency(reply: Reply) -> int:
    usage = reply.usage
    return 120 + (usage.output_tokens if usage else 0) * 8


def _block_json(block: ClaudeBlock) -> dict[str, Any]:
    if block.type == "thinking":
        return {
            "reasoningContent": {
                "reasoningText": {"text": block.text, "signature": block.signature}
            }
        }
    if block.type == "redacted_thinking":
        return {"reasoningContent": {"redactedContent": block.data_b64}}
    if block.type == "text":
        return {"text": block.text}
    return {"toolUse": {"toolUseId": block.id, "name": block.name, "input": dict(block.input)}}


def _delta(index: int, delta: dict[str, Any]) -> bytes:
    return event_message("contentBlockDelta", {"contentBlockIndex": index, "delta": delta})


class BedrockAPI(WireAPI):
    """The Bedrock Converse / ConverseStream wire API (scope ``bedrock``)."""

    name: ClassVar[str] = "bedrock"
    # InvokeModel's documented body limit (Converse documents none): 25,000,000 bytes,
    # https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_InvokeModel.html
    body_limit: ClassVar[BodyLimit] = BodyLimit(
        25_000_000,
        400,
        "1 validation error detected: Value at 'body' failed to satisfy constraint: "
        "Member must have length less than or equal to {limit}",
    )

    def __init__(self, state: EmulatorState) -> None:
        super().__init__(state)
        self.cache = PrefixCache()
        """Prompt caching: the prefixes requests marked, per account and model."""

    def reset(self) -> None:
        self.cache.clear()

    def routes(self) -> Sequence[WireRoute]:
        return (
            WireRoute("/model/{model_id:path}/converse", self.converse),
            WireRoute("/model/{model_id:path}/converse-stream", self.converse_stream),
        )

    def authenticate(self, request: WireRequest) -> None:
        if not request.headers.get("authorization"):
            raise WireError(
                403, "Missing Authentication Token", type="MissingAuthenticationTokenException"
            )

    def error(self, request: WireRequest, error: WireError) -> JsonReply:
        status, code, default = _error_kind(error.status)
        headers = {
            "x-amzn-ErrorType": (error.type or code) + _ERROR_NS,
            "x-amzn-RequestId": request_id("", request.seq),
        }
        return JsonReply({"message": error.message or default}, status, headers)

    def stream_error(self, request: WireRequest, error: WireError, *, index: int) -> bytes:
        status, message = error.status, error.message
        kind = _STREAM_ERRORS.get(status)
        if kind is None:
            original = {
                "type": "error",
                "error": {
                    "type": "overloaded_error" if status == 529 else "api_error",
                    "message": message or "Overloaded",
                },
            }
            payload: dict[str, Any] = {
                "message": message
                or "The model encountered an error while streaming the response. Try your request again.",
                "originalStatusCode": status,
                "originalMessage": json.dumps(original),
            }
            return exception_message("modelStreamErrorException", payload)
        return exception_message(kind, {"message": message or _error_kind(status)[2]})

    def malformed_event(self) -> bytes:
        """A ``contentBlockDelta`` message whose checksum does not match its bytes
        (botocore ignores undecodable JSON payloads, but not a corrupt frame)."""
        frame = bytearray(_delta(0, {"text": "?"}))
        frame[-1] ^= 0xFF
        return bytes(frame)

    # --- handlers ---------------------------------------------------------------------

    def converse(self, request: WireRequest) -> JsonReply | StreamReply:
        return self._converse(request, stream=False)

    def converse_stream(self, request: WireRequest) -> JsonReply | StreamReply:
        return self._converse(request, stream=True)

    def _converse(self, request: WireRequest, *, stream: bool) -> JsonReply | StreamReply:
        model_id = request.path_params.get("model_id", "")
        body = mapping_or_none(request.body)
        name = claude_name(model_id)
        family = family_of(model_id) if name is None else None
        if name is None and family is None:
            raise WireError(400, _INVALID_MODEL)
        if body is None:
            raise WireError(400)
        check_bedrock(body)
        account, region = _credential(request.headers.get("authorization", ""))
        headers = {"x-amzn-RequestId": request_id("", request.seq)}
        signer = self.state.signer
        fields: dict[str, Any] = {}
        cached = CacheUse()
        if _cache_points(body) and (family is not None or not _caches(name)):
            raise WireError(400, _NO_CACHING)
        if family is not None:
            conversation, settings = parse_family_request(
                body, family, signer=signer, region=region, stream=stream
            )
            reply = self.state.reply(self.name, conversation, settings)
            content = render_family(reply, family, signer=signer, region=region)
        else:
            assert name is not None
            parsed = self._parse_claude(body, name, account)
            if parsed.cache is not None:
                cached = parsed.cache.use(self.cache)
            reply = self.state.reply(self.name, parsed.conversation, parsed.settings)
            blocks = render_blocks(reply, parsed, signer=signer, tool_id_prefix="tooluse_", seed="")
            content = [_block_json(b) for b in blocks if b.type != "tool_use"]
            paths = as_list(body.get("additionalModelResponseFieldPaths"))
            if parsed.transformations is not None and "/input_transformations" in paths:
                fields["input_transformations"] = parsed.transformations
            conversation = parsed.conversation
        seed = conversation.digest()
        for index, call in enumerate(reply.tool_calls):
            call_id = call.id or stable_id("tooluse_", seed, str(index))
            use = {"toolUseId": call_id, "name": call.name, "input": dict(call.arguments)}
            content.append({"toolUse": use})
        if stream:
            return _stream(reply, content, headers, fields, cached)
        answer: dict[str, Any] = {
            "metrics": {"latencyMs": _latency(reply)},
            "output": {"message": {"content": content, "role": "assistant"}},
            "stopReason": _STOP[reply.stop],
            "usage": _usage(reply, cached),
        }
        if fields:
            answer["additionalModelResponseFields"] = fields
        return JsonReply(answer, 200, headers)

    def _parse_claude(self, body: Mapping[str, Any], name: str, account: str) -> ClaudeRequest:
        """Claude's reading of a Converse request, its refusals in Bedrock's envelope."""
        claude_body = _to_claude(body, name)
        extra = as_mapping(body.get("additionalModelRequestFields"))
        betas = [b for b in as_list(extra.get("anthropic_beta")) if isinstance(b, str)]
        betas.append(TOOL_CHANGES_BETA)  # Converse carries tool changes natively
        try:
            return parse_request(
                claude_body,
                platform=SCOPE,
                signer=self.state.signer,
                account=account,
                betas=betas,
                cap_effort=True,
                documents=frozenset(_DOCUMENT_FORMATS.values()),
            )
        except WireError as exc:
            if exc.status == 404:
                raise WireError(400, _INVALID_MODEL) from None
            raise WireError(
                exc.status, f"The model returned the following errors: {exc.message}"
            ) from None


def _credential(authorization: str) -> tuple[str, str]:
    """The account (the access key) and region a SigV4 ``Authorization`` header names."""
    match = re.search(r"Credential=([^/,\s]+)/[^/]+/([^/]+)/", authorization)
    if match is None:
        return hashlib.sha256(authorization.encode()).hexdigest()[:16], "us-east-1"
    return hashlib.sha256(match.group(1).encode()).hexdigest()[:16], match.group(2)


def _stream(
    reply: Reply,
    content: Sequence[Mapping[str, Any]],
    headers: Mapping[str, str],
    fields: Mapping[str, Any],
    cached: CacheUse,
) -> StreamReply:
    """ConverseStream events for a reply's content blocks: no ``contentBlockStart`` for
    reasoning or text, reasoning text then its signature, a redacted payload whole, tool uses
    opened with their id and name; a cut falls halfway through the first reasoning."""
    events: list[bytes] = [event_message("messageStart", {"role": "assistant"})]
    cut_at: int | None = None
    for index, block in enumerate(content):
        reasoning = as_mapping(block.get("reasoningContent"))
        text_block = as_mapping(reasoning.get("reasoningText"))
        if text_block:
            pieces = chunk_text(str(text_block.get("text", "")))
            first = len(events)
            events += [_delta(index, {"reasoningContent": {"text": p}}) for p in pieces]
            if cut_at is None:
                cut_at = first + max(1, len(pieces) // 2) if pieces else first
            if "signature" in text_block:
                signature = text_block["signature"]
                events.append(_delta(index, {"reasoningContent": {"signature": signature}}))
        elif "redactedContent" in reasoning:
            redacted = reasoning["redactedContent"]
            events.append(_delta(index, {"reasoningContent": {"redactedContent": redacted}}))
        elif "text" in block:
            events += [_delta(index, {"text": p}) for p in chunk_text(block["text"]) or [""]]
        else:
            use = as_mapping(block.get("toolUse"))
            start = {"toolUse": {"toolUseId": use.get("toolUseId"), "name": use.get("name")}}
            events.append(
                event_message("contentBlockStart", {"contentBlockIndex": index, "start": start})
            )
            arguments = json.dumps(use.get("input", {}), ensure_ascii=False)
            events += [_delta(index, {"toolUse": {"input": p}}) for p in split_json(arguments)]
        events.append(event_message("contentBlockStop", {"contentBlockIndex": index}))
    stop: dict[str, Any] = {"stopReason": _STOP[reply.stop]}
    if fields:
        stop["additionalModelResponseFields"] = dict(fields)
    events.append(event_message("messageStop", stop))
    events.append(
        event_message(
            "metadata", {"usage": _usage(reply, cached), "metrics": {"latencyMs": _latency(reply)}}
        )
    )
    return StreamReply(events, _MEDIA_TYPE, headers, cut_at)
