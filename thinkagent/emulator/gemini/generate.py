"""Gemini API and Vertex AI: ``generateContent`` (JSON) and ``streamGenerateContent``
(SSE with ``?alt=sse``, else one JSON array), two wires with two signing scopes.

* Gemini API (``gemini``): ``POST /{version}/models/{model}:generateContent`` and
  ``:streamGenerateContent`` (``v1``, ``v1beta``, ``v1alpha``); credentials in
  ``x-goog-api-key`` (or ``?key=``), else 403 ``PERMISSION_DENIED``.
* Vertex AI (``vertex``): ``POST /{version}/projects/{project}/locations/{location}/
  publishers/google/models/{model}:generateContent`` and ``:streamGenerateContent``
  (``v1``, ``v1beta1``); ``Authorization: Bearer``, else 401 ``UNAUTHENTICATED``.

Requests are validated by :mod:`thinkagent.emulator.gemini.rules` (camelCase and
snake_case keys alike). Errors are ``{"error": {"code", "message", "status"}}``.

Responses follow the recordings: parts ``{"text", "thought": true}`` (thought summaries,
only with ``includeThoughts``), the answer or a short preamble as text, then
``functionCall`` parts without ids; the first function call of a step carries the
``thoughtSignature`` (standard base64), later parallel calls none. A final answer carries
its signature on its text part; streamed, it comes on a trailing empty text part.
``finishReason`` is ``STOP`` for calls too (with ``finishMessage``); ``usageMetadata``
counts ``thoughtsTokenCount`` apart from ``candidatesTokenCount``, and
``cachedContentTokenCount`` for the prefix implicit caching served (each platform keeps its
own :class:`~thinkagent.emulator.caching.PrefixCache`, per model). A stream sends one
``data: {GenerateContentResponse}\\r\\n\\r\\n`` per thought piece, text piece and step of
calls; the last one has ``finishReason`` and ``usageMetadata``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, cast

from ..brain import prefix_tokens
from ..caching import CacheRules, PrefixCache, segment
from ..encoding import chunk_text, dumps, stable_id
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
from . import server_tools
from .bodies import check_gemini
from .rules import (
    GEMINI_API,
    VERTEX_AI,
    GeminiPlatform,
    GeminiRequest,
    call_content,
    gemini_profile,
    parse_request,
    signature_kind,
    text_content,
)

__all__ = ["GeminiAPI", "VertexAPI"]

_STATUS: Mapping[int, str] = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    409: "ABORTED",
    429: "RESOURCE_EXHAUSTED",
    499: "CANCELLED",
    500: "INTERNAL",
    501: "UNIMPLEMENTED",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}
_MESSAGES: Mapping[int, str] = {
    400: "Request contains an invalid argument.",
    401: "Request had invalid authentication credentials. Expected OAuth 2 access token, login "
    "cookie or other valid authentication credential. See "
    "https://developers.google.com/identity/sign-in/web/devconsole-project.",
    403: "The caller does not have permission",
    404: "Requested entity was not found.",
    409: "The operation was aborted.",
    429: "You exceeded your current quota, please check your plan and billing details. For more "
    "information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.",
    499: "The operation was cancelled.",
    500: "An internal error has occurred. Please retry or report in "
    "https://developers.generativeai.google/guide/troubleshooting",
    501: "Operation is not implemented, or supported, or enabled.",
    503: "The model is overloaded. Please try again later.",
    504: "Deadline expired before operation could complete.",
}
_VERTEX_MESSAGES: Mapping[int, str] = {
    **_MESSAGES,
    429: "Resource exhausted. Please try again later. Please refer to "
    "https://cloud.google.com/vertex-ai/generative-ai/docs/error-code-429 for more details.",
    500: "Internal error encountered.",
}
_FINISH: Mapping[StopReason, str] = {
    "end_turn": "STOP",
    "tool_use": "STOP",
    "stop_sequence": "STOP",
    "max_tokens": "MAX_TOKENS",
    "refusal": "SAFETY",
}
_CALLS_MESSAGE = "Model generated function call(s)."
_SSE_END = b"\r\n\r\n"
_CHUNK_START = b'data: {"candidates":[{"content":{"parts":['


def _status(status: int) -> tuple[int, str]:
    if status == 529:  # Anthropic's "overloaded" is Google's 503
        status = 503
    if status in _STATUS:
        return status, _STATUS[status]
    return status, "INTERNAL" if status >= 500 else "FAILED_PRECONDITION"


def _error_body(code: int, status: str, message: str, retry_after: float | None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message, "status": status}
    if retry_after is not None:
        error["details"] = [
            {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": f"{retry_after:g}s"}
        ]
    return {"error": error}


class _GoogleAPI(WireAPI):
    """What the Gemini API and Vertex AI wires share: everything but routes, credentials,
    the signing scope and some wording."""

    platform: ClassVar[GeminiPlatform]
    versions: ClassVar[frozenset[str]]
    messages: ClassVar[Mapping[int, str]] = _MESSAGES
    # Inline data up to 100 MB per request (https://ai.google.dev/gemini-api/docs/file-input-methods);
    # Google's front end refuses more with a 400 INVALID_ARGUMENT.
    body_limit: ClassVar[BodyLimit] = BodyLimit(
        100 * 2**20, 400, "Request payload size exceeds the limit: {limit} bytes."
    )

    def __init__(self, state: EmulatorState) -> None:
        super().__init__(state)
        self.cache = PrefixCache()
        """Implicit caching: the prefixes of this platform's requests, per model."""

    def reset(self) -> None:
        self.cache.clear()

    # --- errors -----------------------------------------------------------------------

    def error(self, request: WireRequest, error: WireError) -> JsonReply:
        return JsonReply(self._body(error, error.retry_after), _status(error.status)[0])

    def stream_error(self, request: WireRequest, error: WireError, *, index: int) -> bytes:
        return b"data: " + dumps(self._body(error, None)) + _SSE_END

    def _body(self, error: WireError, retry_after: float | None) -> dict[str, Any]:
        code, name = _status(error.status)
        message = (
            error.message or self.messages.get(code) or self.messages[500 if code >= 500 else 400]
        )
        return _error_body(code, name, message, retry_after)

    def malformed_event(self) -> bytes:
        return _CHUNK_START + b'{"text": ' + _SSE_END

    def method_not_allowed(self, request: WireRequest, allowed: Sequence[str]) -> WireError:
        """Google's front end routes by method too: another method is a 404."""
        return WireError(404, "Method not found.")

    # --- hooks ------------------------------------------------------------------------

    def not_found(self, request: WireRequest, stream: bool) -> str:
        """The 404 message for a model the emulator does not serve."""
        raise NotImplementedError

    def response_extras(self) -> dict[str, Any]:
        """Top-level response fields after ``modelVersion`` and ``responseId``."""
        return {}

    def usage_extras(self, usage: dict[str, Any]) -> None:
        """Add the wire's own ``usageMetadata`` fields."""

    # --- handlers ---------------------------------------------------------------------

    def generate(self, request: WireRequest) -> JsonReply | StreamReply:
        return self._serve(request, stream=False)

    def stream(self, request: WireRequest) -> JsonReply | StreamReply:
        return self._serve(request, stream=True)

    def _serve(self, request: WireRequest, *, stream: bool) -> JsonReply | StreamReply:
        if request.path_params.get("version") not in self.versions:
            raise WireError(404)
        model_name = request.path_params["model"]
        model = gemini_profile(model_name)
        if model is None:
            raise WireError(404, self.not_found(request, stream))
        body = request.body
        if not isinstance(body, Mapping):
            raise WireError(400, "Invalid JSON payload received. Expected an object.")
        check_gemini(cast("Mapping[str, Any]", body))
        parsed = parse_request(
            cast("Mapping[str, Any]", body), model, platform=self.platform, signer=self.state.signer
        )
        reply = self.state.reply(self.name, parsed.conversation, parsed.settings)
        seed = parsed.conversation.digest()
        meta = {
            "modelVersion": model_name,
            "responseId": stable_id("", seed, reply.stop, length=22),
            **self.response_extras(),
        }
        chunks, json_parts, cut_at = self._render(reply, parsed, seed)
        usage = self._usage(reply, self._cached(model_name, parsed))
        finish: dict[str, Any] = {"finishReason": _FINISH[reply.stop]}
        if reply.tool_calls:
            finish["finishMessage"] = _CALLS_MESSAGE
        texts = [
            (i, str(p["text"]))
            for i, p in enumerate(json_parts)
            if "text" in p and not p.get("thought")
        ]
        finish.update(server_tools.grounding(reply, texts))
        if not stream:
            return JsonReply(self._response(json_parts, finish, usage, meta))
        last = self._response(chunks[-1], finish, usage, meta)
        if request.query.get("alt") != "sse":  # a JSON array of the chunks
            return JsonReply([*(self._response(c, None, None, meta) for c in chunks[:-1]), last])
        tail = b'],"role":"model"},"index":0}],' + dumps(meta)[1:] + _SSE_END
        events = [_CHUNK_START + b",".join(dumps(p) for p in parts) + tail for parts in chunks[:-1]]
        events.append(b"data: " + dumps(last) + _SSE_END)
        return StreamReply(events, "text/event-stream", {"cache-control": "no-cache"}, cut_at)

    # --- rendering --------------------------------------------------------------------

    def _render(
        self, reply: Reply, parsed: GeminiRequest, seed: str = ""
    ) -> tuple[list[list[dict[str, Any]]], list[dict[str, Any]], int | None]:
        """(the parts of each stream chunk, the parts of the JSON response, the chunk
        where a default cut stops the stream)."""
        model = parsed.model
        kind = signature_kind(model)
        signs = model.family == "3" or (parsed.settings.thinking and bool(reply.tool_calls))
        size = min(140 + len(reply.thinking or "") // 2, 1100)

        def seal(content: str) -> str:
            return self.state.signer.seal_b64(self.platform.scope, kind, content, size=size)

        chunks: list[list[dict[str, Any]]] = []
        parts: list[dict[str, Any]] = []
        cut_at: int | None = None
        if parsed.include_thoughts and reply.thinking:
            pieces = chunk_text(reply.thinking, 64)
            parts.append({"text": reply.thinking, "thought": True})
            chunks.extend([{"text": p, "thought": True}] for p in pieces)
            cut_at = max(1, len(pieces) // 2)
        for part in server_tools.server_parts(reply, seed, parsed.server_invocations, seal):
            parts.append(part)
            chunks.append([part])
        text = reply.text
        if reply.tool_calls:
            if text:
                parts.append({"text": text})
                chunks.extend([{"text": p}] for p in chunk_text(text, 64))
            calls: list[dict[str, Any]] = []
            for rank, call in enumerate(reply.tool_calls):
                function: dict[str, Any] = {"name": call.name, "args": dict(call.arguments)}
                if call.id:
                    function = {"id": call.id, **function}
                part: dict[str, Any] = {"functionCall": function}
                if rank == 0 and signs:
                    part["thoughtSignature"] = seal(call_content(0, call.name, call.arguments))
                calls.append(part)
            parts.extend(calls)
            if parsed.stream_arguments:
                chunks.extend(_streamed_calls(calls))
            else:
                chunks.append(calls)
        else:
            signed = model.family == "3"
            answer: dict[str, Any] = {"text": text}
            if signed:
                answer["thoughtSignature"] = seal(text_content(text))
            parts.append(answer)
            pieces = chunk_text(text, 64)
            chunks.extend([{"text": p}] for p in pieces)
            if signed:
                chunks.append([{"text": "", "thoughtSignature": answer["thoughtSignature"]}])
            elif not pieces:
                chunks.append([{"text": ""}])
        if cut_at is None:
            cut_at = max(1, (len(chunks) - 1) // 2) if len(chunks) > 1 else 0
        return chunks, parts, cut_at

    def _cached(self, model_name: str, parsed: GeminiRequest) -> int:
        """Implicit caching: the tokens of the longest prefix of this request (system and
        tools, then whole turns) that an earlier request to the model left in the cache, if
        it is long enough for the model; this request's prefixes are kept for later ones."""
        tokens = prefix_tokens(parsed.conversation)
        segments = [segment(piece, n) for piece, n in zip(parsed.pieces, tokens, strict=True)]
        rules = CacheRules(minimum_tokens=parsed.model.cache_minimum)
        return self.cache.use(model_name, segments, rules).read_tokens

    def _usage(self, reply: Reply, cached: int) -> dict[str, Any]:
        usage = reply.usage
        assert usage is not None
        thoughts = min(usage.thinking_tokens, usage.output_tokens)
        candidates = usage.output_tokens - thoughts
        out: dict[str, Any] = {
            "promptTokenCount": usage.input_tokens,
            "candidatesTokenCount": candidates,
            "totalTokenCount": usage.input_tokens + usage.output_tokens,
            "promptTokensDetails": [{"modality": "TEXT", "tokenCount": usage.input_tokens}],
        }
        cached = min(cached, usage.input_tokens)
        if cached:
            out["cachedContentTokenCount"] = cached
            out["cacheTokensDetails"] = [{"modality": "TEXT", "tokenCount": cached}]
        if thoughts:
            out["thoughtsTokenCount"] = thoughts
        tool_tokens = server_tools.tool_use_tokens(reply)
        if tool_tokens:
            out["toolUsePromptTokenCount"] = tool_tokens
        self.usage_extras(out)
        return out

    @staticmethod
    def _response(
        parts: Sequence[dict[str, Any]],
        finish: Mapping[str, Any] | None,
        usage: Mapping[str, Any] | None,
        meta: Mapping[str, Any],
    ) -> dict[str, Any]:
        candidate: dict[str, Any] = {"content": {"parts": list(parts), "role": "model"}}
        if finish is not None:
            candidate.update(finish)
        candidate["index"] = 0
        out: dict[str, Any] = {"candidates": [candidate]}
        if usage is not None:
            out["usageMetadata"] = usage
        out.update(meta)
        return out


def _streamed_calls(calls: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Function calls as Vertex AI streams them with ``streamFunctionCallArguments``: each
    opens with its name (and the signature it carries), then each argument value comes as
    ``partialArgs`` at its JSON path (a string in pieces, ending with an empty piece), and an
    empty ``functionCall`` closes it (as recorded in vercel/ai ``packages/google`` fixtures)."""
    chunks: list[list[dict[str, Any]]] = []
    for call in calls:
        function = call["functionCall"]
        head: dict[str, Any] = {"functionCall": {"name": function["name"], "willContinue": True}}
        if "id" in function:
            head["functionCall"] = {"id": function["id"], **head["functionCall"]}
        if "thoughtSignature" in call:
            head["thoughtSignature"] = call["thoughtSignature"]
        chunks.append([head])
        for path, value in _leaves(function.get("args") or {}, "$"):
            if isinstance(value, str):
                for piece in chunk_text(value, 16):
                    arg = {"jsonPath": path, "stringValue": piece, "willContinue": True}
                    chunks.append([{"functionCall": {"partialArgs": [arg], "willContinue": True}}])
                arg = {"jsonPath": path, "stringValue": ""}
            elif isinstance(value, bool):
                arg = {"jsonPath": path, "boolValue": value}
            elif value is None:
                arg = {"jsonPath": path, "nullValue": "NULL_VALUE"}
            else:
                arg = {"jsonPath": path, "numberValue": value}
            chunks.append([{"functionCall": {"partialArgs": [arg], "willContinue": True}}])
        chunks.append([{"functionCall": {}}])
    return chunks


def _leaves(value: Any, path: str) -> list[tuple[str, Any]]:
    """The scalar values of a JSON value with their JSON paths (RFC 9535), in order."""
    if isinstance(value, Mapping):
        out: list[tuple[str, Any]] = []
        for key, item in cast("Mapping[str, Any]", value).items():
            name = f".{key}" if key.isidentifier() else "[" + json.dumps(key) + "]"
            out.extend(_leaves(item, path + name))
        return out
    if isinstance(value, list):
        out = []
        for index, item in enumerate(cast("list[Any]", value)):
            out.extend(_leaves(item, f"{path}[{index}]"))
        return out
    return [(path, value)]


class GeminiAPI(_GoogleAPI):
    """The Gemini API (``generativelanguage.googleapis.com``), scope ``gemini``."""

    name: ClassVar[str] = "gemini"
    platform: ClassVar[GeminiPlatform] = GEMINI_API
    versions: ClassVar[frozenset[str]] = frozenset({"v1", "v1beta", "v1alpha"})

    def routes(self) -> Sequence[WireRoute]:
        return (
            WireRoute("/{version}/models/{model}:generateContent", self.generate),
            WireRoute("/{version}/models/{model}:streamGenerateContent", self.stream),
        )

    def authenticate(self, request: WireRequest) -> None:
        headers = request.headers
        if not (
            headers.get("x-goog-api-key")
            or request.query.get("key")
            or headers.get("authorization")
        ):
            raise WireError(
                403,
                "Method doesn't allow unregistered callers (callers without established "
                "identity). Please use API Key or other form of API consumer identity to call "
                "this API.",
            )

    def not_found(self, request: WireRequest, stream: bool) -> str:
        method = "StreamGenerateContent" if stream else "generateContent"
        return (
            f"models/{request.path_params['model']} is not found for API version "
            f"{request.path_params['version']}, or is not supported for {method}. Call "
            "ListModels to see the list of available models and their supported methods."
        )


class VertexAPI(_GoogleAPI):
    """Vertex AI (``aiplatform.googleapis.com``), scope ``vertex``."""

    name: ClassVar[str] = "vertex"
    platform: ClassVar[GeminiPlatform] = VERTEX_AI
    versions: ClassVar[frozenset[str]] = frozenset({"v1", "v1beta1"})
    messages: ClassVar[Mapping[int, str]] = _VERTEX_MESSAGES

    _PREFIX = "/{version}/projects/{project}/locations/{location}/publishers/google/models/{model}"

    def routes(self) -> Sequence[WireRoute]:
        return (
            WireRoute(self._PREFIX + ":generateContent", self.generate),
            WireRoute(self._PREFIX + ":streamGenerateContent", self.stream),
        )

    def authenticate(self, request: WireRequest) -> None:
        if not request.headers.get("authorization", "").lower().startswith("bearer "):
            raise WireError(
                401,
                "Request is missing required authentication credential. Expected OAuth 2 access "
                "token, login cookie or other valid authentication credential. See "
                "https://developers.google.com/identity/sign-in/web/devconsole-project.",
            )

    def not_found(self, request: WireRequest, stream: bool) -> str:
        p = request.path_params
        return (
            f"Publisher Model `projects/{p['project']}/locations/{p['location']}/publishers/"
            f"google/models/{p['model']}` was not found or your project does not have access "
            "to it. Please ensure you are using a valid model version. For more information, "
            "see: https://cloud.google.com/vertex-ai/generative-ai/docs/learn/model-versions"
        )

    def response_extras(self) -> dict[str, Any]:
        now = time.time()
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now))
        return {"createTime": f"{stamp}.{int(now % 1 * 1_000_000):06d}Z"}

    def usage_extras(self, usage: dict[str, Any]) -> None:
        usage["candidatesTokensDetails"] = [
            {"modality": "TEXT", "tokenCount": usage["candidatesTokenCount"]}
        ]
        usage["trafficType"] = "ON_DEMAND"
