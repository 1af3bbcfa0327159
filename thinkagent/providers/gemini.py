"""`GeminiModel`: Gemini's thoughts and thought signatures through the official `google-genai`
SDK, on the Gemini API and on Vertex AI.

```python
from thinkagent import Agent
from thinkagent.providers.gemini import GeminiModel

model = GeminiModel("gemini-3-pro-preview", level="high")      # GEMINI_API_KEY from the env
result = await Agent(model, tools=[get_weather]).run("What's the weather in Paris?")
```

A response becomes one assistant `Message`, part for part and in order: `thought: true` parts
-> `ThinkingBlock` (signed when the part carries a `thoughtSignature`), text parts ->
`TextPart`, function calls -> `ToolCall`; a thought signature stays on the exact part that
carried it (an empty text part that only carries a signature is kept), as standard base64 of
its bytes. On later turns the parts of this scope (`"gemini"` or `"vertex"`, whichever the
client talks to) go back in order with each signature on its part, byte for byte; signatures
of another scope are never sent. See `docs/providers/gemini.md`.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any, cast

import httpx2
from google import genai
from google.genai import errors as genai_errors
from google.genai import types
from pydantic import JsonValue, ValidationError

from ..errors import ConfigurationError, HistoryError, ProviderError
from ..history import ForeignReasoning, for_scope
from ..messages import (
    Message,
    Part,
    ProviderDetails,
    TextPart,
    ThinkingBlock,
    ToolCall,
    ToolResult,
    Usage,
)
from ..stream import MessageAssembler, TextDelta, ThinkingDelta, ToolCallDelta
from ._common import (
    ModelInfo,
    arguments_object,
    check_foreign_reasoning,
    connection_error,
    copy_settings,
    interrupted,
    merge_settings,
    retryable_status,
    tool_choice_name,
)
from ._gemini import (
    GENERATED_ID,
    SKIP_SIGNATURE,
    GeminiThinking,
    MissingSignature,
    ReplayThoughts,
    ThinkingLevel,
    check_missing_signature,
    check_replay_thoughts,
    decode_signature,
    encode_signature,
    finish_reason,
    generated_call_id,
    signature_generation,
)
from .base import ModelRequest, ModelResponse, ModelSettings, ModelStreamEvent, ToolDefinition

__all__ = [
    "DEFAULT_MAX_RETRIES",
    "SKIP_SIGNATURE",
    "GeminiModel",
    "GeminiThinking",
    "MissingSignature",
    "ReplayThoughts",
    "ThinkingLevel",
    "provider_error",
]

DEFAULT_MAX_RETRIES = 2
"""Retries (after the first attempt) of a client `GeminiModel` builds itself."""

_RESERVED = frozenset(
    {"system_instruction", "tools", "automatic_function_calling", "thinking_config"}
)
_GENERATED: ProviderDetails = {GENERATED_ID: True}
_RETRYABLE_STATUSES = frozenset({408, 429})
"""The statuses (besides 5xx) the SDK's own retry options retry."""


def _transport_errors() -> tuple[type[BaseException], ...]:
    """Errors the SDK lets through from its HTTP stack: a dropped or refused connection, a
    timeout (httpx2, or aiohttp when it is installed: the SDK prefers it then)."""
    found: list[type[BaseException]] = [httpx2.TransportError, TimeoutError]
    try:
        aiohttp = importlib.import_module("aiohttp")
    except ImportError:  # pragma: no cover - depends on the environment
        return tuple(found)
    found.append(cast("type[BaseException]", aiohttp.ClientError))
    return tuple(found)


_TRANSPORT_ERRORS = _transport_errors()
_MALFORMED = (json.JSONDecodeError, genai_errors.UnknownApiResponseError)
"""A body (or stream event) that is not the JSON it should be."""


class GeminiModel(ModelInfo[genai.Client]):
    """A Gemini model behind the Gemini API or Vertex AI, through `google.genai.Client`.

    - `client`: your `genai.Client` (its credentials, base URL, timeout and retry options
      apply, and it decides the scope: `"vertex"` when it is a Vertex AI client, else
      `"gemini"`). When omitted one is built from the environment (`GEMINI_API_KEY` or
      `GOOGLE_API_KEY`; or `GOOGLE_GENAI_USE_VERTEXAI=true` with `GOOGLE_CLOUD_PROJECT` and
      `GOOGLE_CLOUD_LOCATION`) with the SDK's retry options set to `max_retries` retries
      (408, 429 and 5xx, exponential backoff). A client you pass keeps its own retry options
      (the SDK's default is no retry).
    - `include_thoughts`: return thought summaries (`None`: on, unless `budget=0`).
    - `budget`: thinking budget in tokens (Gemini 2.5), `0` off, `-1` automatic.
    - `level`: thinking level (Gemini 3): `minimal`, `low`, `medium`, `high`, `xhigh`.
    - `foreign_reasoning`: reasoning from another provider or scope: `"drop"` (default) or
      `"text"` (its visible text as plain text).
    - `missing_signature`: a current-turn function call with no signature of this scope (it
      came from another provider or scope): `"skip_validator"` (default) puts the documented
      dummy signature `skip_thought_signature_validator` on the first call of that model
      turn; `"send"` sends it unsigned.
    - `replay_thoughts`: `"signed"` (default) replays the thought parts that carry a signature
      and leaves out unsigned thought summaries; `"all"` replays every thought part.
    - `settings`: default `ModelSettings`, under each request's own.
    - `generation_config`: other `GenerateContentConfig` fields, passed through on every
      request (`top_k`, `seed`, `safety_settings`, `response_mime_type`...).

    Conflicting settings raise `ConfigurationError` here, before anything is sent.
    """

    def __init__(
        self,
        model_name: str,
        *,
        client: genai.Client | None = None,
        include_thoughts: bool | None = None,
        budget: int | None = None,
        level: ThinkingLevel | str | None = None,
        foreign_reasoning: ForeignReasoning = "drop",
        missing_signature: MissingSignature = "skip_validator",
        replay_thoughts: ReplayThoughts = "signed",
        max_retries: int = DEFAULT_MAX_RETRIES,
        settings: ModelSettings | None = None,
        generation_config: Mapping[str, Any] | None = None,
    ) -> None:
        self.thinking = GeminiThinking.for_model(
            model_name, include_thoughts=include_thoughts, budget=budget, level=level
        )
        check_foreign_reasoning(foreign_reasoning)
        check_missing_signature(missing_signature)
        check_replay_thoughts(replay_thoughts)
        if not isinstance(max_retries, int) or max_retries < 0:  # pyright: ignore[reportUnnecessaryIsInstance]
            raise ConfigurationError(f"max_retries must be 0 or more, got {max_retries!r}")
        self._model_name = model_name
        self.foreign_reasoning: ForeignReasoning = foreign_reasoning
        self.missing_signature: MissingSignature = missing_signature
        self.replay_thoughts: ReplayThoughts = replay_thoughts
        self.settings: ModelSettings = settings or {}
        self._base_config = _base_config(self.thinking, generation_config)
        self._client = client if client is not None else _client_from_environment(max_retries)
        self._scope = "vertex" if self._client.vertexai else "gemini"
        self._tools_key: tuple[ToolDefinition, ...] = ()
        self._tools: list[types.Tool] = []
        self._turns: dict[int, tuple[Message, str, types.Content | None]] = {}

    # --- requests ---------------------------------------------------------------------------

    def build_request(self, request: ModelRequest) -> dict[str, Any]:
        """The keyword arguments for `client.aio.models.generate_content(_stream)`: `model`,
        `contents` and `config`. Raises `ConfigurationError` for a tool choice naming no tool
        on offer, `HistoryError` for a signature that is not base64."""
        settings = merge_settings(self.settings, request.settings)
        update: dict[str, Any] = {}
        if request.instructions:
            update["system_instruction"] = request.instructions
        if request.tools:
            update["tools"] = self._function_declarations(request.tools)
        choice = settings.get("tool_choice")
        if choice is not None:
            update["tool_config"] = _tool_config(choice, request.tools)
        copy_settings(
            settings,
            update,
            max_tokens="max_output_tokens",
            temperature="temperature",
            top_p="top_p",
            stop_sequences="stop_sequences",
        )
        http_options = _http_options(self._base_config.http_options, settings)
        if http_options is not None:
            update["http_options"] = http_options
        config = self._base_config.model_copy(update=update) if update else self._base_config
        return {
            "model": self._model_name,
            "contents": self.build_contents(request.messages),
            "config": config,
        }

    def build_contents(self, messages: Sequence[Message]) -> list[types.Content]:
        """The `contents` for a history: this scope's parts replayed in order, each signature
        on its part; proofs of other scopes (and of other Gemini generations) removed
        (`for_scope`); the documented dummy signature on the first unsigned function call of
        each current-turn model turn that came from elsewhere."""
        scope = self._scope
        own = signature_generation(self._model_name)
        if own is not None:  # another generation's signatures are foreign here (ADR 16)
            messages = [
                m
                if m.role != "assistant" or m.scope != scope or _same_generation(m.model, own)
                else m.model_copy(update={"scope": f"{scope}:{m.model}"})
                for m in messages
            ]
        scoped = for_scope(messages, scope, foreign_reasoning=self.foreign_reasoning)
        generated = {
            part.id
            for message in scoped
            if message.role == "assistant"
            for part in message.parts
            if isinstance(part, ToolCall) and _is_generated(part)
        }
        current = _current_turn_start(scoped)
        previous = self._turns
        policy = self.replay_thoughts
        turns: dict[int, tuple[Message, str, types.Content | None]] = {}
        contents: list[types.Content] = []
        for index, message in enumerate(scoped):
            if message.role == "user":
                content = _user_content(message, generated)
            else:
                # an assistant message is immutable: its content is built once per policy
                cached = previous.get(id(message))
                if cached is not None and cached[0] is message and cached[1] == policy:
                    content = cached[2]
                else:
                    content = self._model_content(message, index)
                turns[id(message)] = (message, policy, content)
                if (
                    content is not None
                    and index > current
                    and message.scope != scope
                    and self.missing_signature == "skip_validator"
                ):
                    content = _with_skip_signature(content)
            if content is None:
                continue
            if contents and contents[-1].role == content.role and _mergeable(content):
                last = contents[-1]
                contents[-1] = types.Content(
                    role=last.role, parts=[*(last.parts or ()), *(content.parts or ())]
                )
            else:
                contents.append(content)
        self._turns = turns
        return contents

    def _model_content(self, message: Message, index: int) -> types.Content | None:
        parts: list[types.Part] = []
        for j, part in enumerate(message.parts):
            if isinstance(part, ThinkingBlock):
                if part.redacted is not None:
                    continue
                if part.signature is not None:
                    parts.append(
                        types.Part(
                            text=part.text,
                            thought=True,
                            thought_signature=_signature_bytes(part.signature, index, j),
                        )
                    )
                elif self.replay_thoughts == "all" and part.text:
                    parts.append(types.Part(text=part.text, thought=True))
            elif isinstance(part, TextPart):
                if part.signature is not None:
                    parts.append(
                        types.Part(
                            text=part.text,
                            thought_signature=_signature_bytes(part.signature, index, j),
                        )
                    )
                elif part.text:
                    parts.append(types.Part(text=part.text))
            elif isinstance(part, ToolCall):
                parts.append(
                    types.Part(
                        function_call=types.FunctionCall(
                            id=None if _is_generated(part) else part.id,
                            name=part.name,
                            args=arguments_object(part),
                        ),
                        thought_signature=(
                            None
                            if part.signature is None
                            else _signature_bytes(part.signature, index, j)
                        ),
                    )
                )
        if not parts:
            return None
        return types.Content(role="model", parts=parts)

    def _function_declarations(self, tools: Sequence[ToolDefinition]) -> list[types.Tool]:
        key = tuple(tools)
        if len(key) != len(self._tools_key) or any(
            a is not b for a, b in zip(key, self._tools_key, strict=True)
        ):
            declarations = [
                types.FunctionDeclaration(
                    name=tool.name,
                    description=tool.description,
                    parameters_json_schema=tool.parameters,
                )
                for tool in tools
            ]
            self._tools = [types.Tool(function_declarations=declarations)]
            self._tools_key = key
        return self._tools

    async def request(self, request: ModelRequest) -> ModelResponse:
        params = self.build_request(request)
        try:
            response = await self._client.aio.models.generate_content(**params)  # pyright: ignore[reportUnknownMemberType]
        except genai_errors.APIError as exc:
            raise provider_error(exc, self._scope) from exc
        except _TRANSPORT_ERRORS as exc:
            raise _transport_error(exc, self._scope) from exc
        except _MALFORMED as exc:
            raise ProviderError(
                f"the response body is not valid JSON: {exc}",
                scope=self._scope,
                retryable=True,
                error_type="malformed_response",
            ) from exc
        return self.parse_response(response)

    def parse_response(self, response: types.GenerateContentResponse) -> ModelResponse:
        """The shared form of an SDK response: its first candidate's parts in order, each
        signature on its part, usage and finish reason."""
        scope = self._scope
        response_id = response.response_id
        parts: list[Part] = []
        raw_finish: str | None = None
        candidates = response.candidates
        if candidates:
            candidate = candidates[0]
            raw_finish = _enum_value(candidate.finish_reason)
            content = candidate.content
            for part in (content.parts or ()) if content is not None else ():
                raw_signature = part.thought_signature
                signature = encode_signature(raw_signature) if raw_signature else None
                call = part.function_call
                if call is not None:
                    parts.append(_tool_call(call, signature, response_id, len(parts)))
                    continue
                text = part.text
                if not text and signature is None:
                    continue  # nothing to keep (or a part kind the shared schema has no place for)
                if part.thought:
                    parts.append(ThinkingBlock(text=text or "", signature=signature))
                else:
                    parts.append(TextPart(text=text or "", signature=signature))
        has_calls = any(isinstance(p, ToolCall) for p in parts)
        details = _details(raw_finish, response)
        normalised = finish_reason(raw_finish, tool_calls=has_calls)
        if normalised is None and not candidates and details is not None:
            normalised = "content_filter"  # the prompt itself was blocked
        return ModelResponse(
            Message(
                role="assistant",
                parts=tuple(parts),
                scope=scope,
                model=self._model_name,
                id=response_id,
                usage=_usage(response.usage_metadata),
                finish_reason=normalised,
                provider_details=details,
            )
        )

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelStreamEvent]:
        """Deltas as Gemini streams them, then the complete `ModelResponse`.

        Part boundaries follow the non-streamed response: chunks of one kind (thought or
        text) continue the same part until a signature closes it or the kind changes; every
        function call is a part of its own. Raises `StreamInterrupted` (with the unsigned
        partial message) when the stream ends without a finish reason, `ProviderError` for
        an error the service reports.
        """
        scope = self._scope
        params = self.build_request(request)
        try:
            chunks = await self._client.aio.models.generate_content_stream(**params)  # pyright: ignore[reportUnknownMemberType]
        except genai_errors.APIError as exc:
            raise provider_error(exc, scope) from exc
        except _TRANSPORT_ERRORS as exc:
            raise _transport_error(exc, scope) from exc
        assembler = MessageAssembler(json_arguments=True)
        add = assembler.add
        index = -1
        open_kind = 0  # 1: a thought part is open, 2: a text part is open, 0: none
        has_calls = False
        response_id: str | None = None
        raw_finish: str | None = None
        usage_metadata: types.GenerateContentResponseUsageMetadata | None = None
        last: types.GenerateContentResponse | None = None
        try:
            async for chunk in chunks:
                last = chunk
                if chunk.response_id:
                    response_id = chunk.response_id
                if chunk.usage_metadata is not None:
                    usage_metadata = chunk.usage_metadata
                candidates = chunk.candidates
                if not candidates:
                    continue
                candidate = candidates[0]
                content = candidate.content
                if content is not None and content.parts:
                    for part in content.parts:
                        raw_signature = part.thought_signature
                        signature = encode_signature(raw_signature) if raw_signature else None
                        call = part.function_call
                        if call is not None:
                            index += 1
                            open_kind = 0
                            has_calls = True
                            call_id = call.id
                            out: TextDelta | ThinkingDelta | ToolCallDelta = ToolCallDelta(
                                index,
                                id=call_id or generated_call_id(response_id, index),
                                name=call.name or "",
                                args_fragment=json.dumps(call.args) if call.args else "",
                                signature=signature,
                                provider_details=None if call_id else _GENERATED,
                            )
                        else:
                            text = part.text
                            kind = 1 if part.thought else 2
                            if not text and signature is None:
                                continue
                            if kind != open_kind:
                                index += 1
                                open_kind = kind
                            if signature is not None:
                                open_kind = 0  # a signature closes its part
                            if kind == 1:
                                out = ThinkingDelta(index, text or "", signature)
                            else:
                                out = TextDelta(index, text or "", signature)
                        add(out)
                        yield out
                if candidate.finish_reason is not None:
                    raw_finish = _enum_value(candidate.finish_reason)
        except genai_errors.APIError as exc:  # an error the service sent in the stream
            raise provider_error(exc, scope) from exc
        except (*_TRANSPORT_ERRORS, *_MALFORMED, ValidationError) as exc:
            if last is None and isinstance(exc, _TRANSPORT_ERRORS):
                # the SDK sends lazily: nothing arrived, the request itself failed
                raise _transport_error(exc, scope) from exc
            raise interrupted(
                f"the stream broke before its finish reason: {type(exc).__name__}: {exc}",
                assembler,
                scope=scope,
                model=self._model_name,
            ) from exc
        finally:  # left early (or failed): release the connection now, not at collection
            aclose = getattr(chunks, "aclose", None)
            if aclose is not None:
                await aclose()
        blocked = last is not None and _details(None, last) is not None
        if raw_finish is None and not blocked:
            raise interrupted(
                "the stream ended without a finish reason",
                assembler,
                scope=scope,
                model=self._model_name,
            )
        normalised = finish_reason(raw_finish, tool_calls=has_calls)
        if normalised is None and blocked:
            normalised = "content_filter"
        yield ModelResponse(
            assembler.message(
                scope=scope,
                model=self._model_name,
                usage=_usage(usage_metadata),
                finish_reason=normalised,
                id=response_id,
                provider_details=_details(raw_finish, last),
            )
        )


# --- translation helpers ---------------------------------------------------------------------


def _client_from_environment(max_retries: int) -> genai.Client:
    options = types.HttpOptions(retry_options=types.HttpRetryOptions(attempts=max_retries + 1))
    try:
        return genai.Client(http_options=options)
    except ValueError as exc:
        raise ConfigurationError(
            "no Gemini credentials: set GEMINI_API_KEY or GOOGLE_API_KEY (Gemini API), or "
            "GOOGLE_GENAI_USE_VERTEXAI=true with GOOGLE_CLOUD_PROJECT and GOOGLE_CLOUD_LOCATION "
            "(Vertex AI), or pass client=genai.Client(...)"
        ) from exc


def _base_config(
    thinking: GeminiThinking, generation_config: Mapping[str, Any] | None
) -> types.GenerateContentConfig:
    extra = dict(generation_config or {})
    reserved = sorted(_RESERVED.intersection(extra))
    if reserved:
        raise ConfigurationError(
            f"generation_config may not set {', '.join(reserved)}: thinking is configured with "
            "include_thoughts/budget/level, instructions and tools come with each request, and "
            "the agent loop runs the tools (automatic function calling stays off)"
        )
    fields: dict[str, Any] = {
        **extra,
        "automatic_function_calling": types.AutomaticFunctionCallingConfig(disable=True),
    }
    thinking_config = thinking.to_config()
    if thinking_config is not None:
        fields["thinking_config"] = types.ThinkingConfig(**thinking_config)
    try:
        return types.GenerateContentConfig(**fields)
    except ValidationError as exc:
        raise ConfigurationError(f"invalid generation_config: {exc}") from exc


def _http_options(
    base: types.HttpOptions | None, settings: ModelSettings
) -> types.HttpOptions | None:
    """Per-request HTTP options (the SDK patches them over the client's): timeout in
    milliseconds, extra headers, extra body fields."""
    if (
        "timeout" not in settings
        and "extra_headers" not in settings
        and "extra_body" not in settings
    ):
        return None
    options = base.model_copy() if base is not None else types.HttpOptions()
    if "timeout" in settings:
        options.timeout = round(settings["timeout"] * 1000)
    if "extra_headers" in settings:
        options.headers = {**(options.headers or {}), **settings["extra_headers"]}
    if "extra_body" in settings:
        options.extra_body = {**(options.extra_body or {}), **settings["extra_body"]}
    return options


def _tool_config(choice: str, tools: Sequence[ToolDefinition]) -> types.ToolConfig:
    if choice == "auto":
        mode, allowed = types.FunctionCallingConfigMode.AUTO, None
    elif choice == "none":
        mode, allowed = types.FunctionCallingConfigMode.NONE, None
    elif choice == "required":
        mode, allowed = types.FunctionCallingConfigMode.ANY, None
    else:
        tool_choice_name(choice, tools)  # raises for a name no tool on offer has
        mode, allowed = types.FunctionCallingConfigMode.ANY, [choice]
    return types.ToolConfig(
        function_calling_config=types.FunctionCallingConfig(
            mode=mode, allowed_function_names=allowed
        )
    )


def _same_generation(model: str | None, own: str) -> bool:
    generation = signature_generation(model)
    return generation is None or generation == own


def _is_generated(call: ToolCall) -> bool:
    details = call.provider_details
    return details is not None and details.get(GENERATED_ID) is True


def _current_turn_start(messages: Sequence[Message]) -> int:
    """The index of the last user message with a prompt (not only tool results): the model
    turns after it form the current turn, whose function calls must be signed."""
    for i in range(len(messages) - 1, -1, -1):
        message = messages[i]
        if message.role == "user" and any(isinstance(p, TextPart) for p in message.parts):
            return i
    return -1


def _with_skip_signature(content: types.Content) -> types.Content:
    """The content with the dummy signature on its first function call when that call has
    no signature (the other parts unchanged)."""
    parts = content.parts or []
    for i, part in enumerate(parts):
        if part.function_call is not None:
            if part.thought_signature is not None:
                return content
            patched = part.model_copy(update={"thought_signature": SKIP_SIGNATURE})
            return types.Content(role=content.role, parts=[*parts[:i], patched, *parts[i + 1 :]])
    return content


def _mergeable(content: types.Content) -> bool:
    """A content may join the one before it (same role) only when none of its parts is
    signed: a signature stays in the model turn it came in."""
    return all(part.thought_signature is None for part in content.parts or ())


def _user_content(message: Message, generated: set[str]) -> types.Content | None:
    parts: list[types.Part] = []
    for part in message.parts:
        if isinstance(part, ToolResult):
            parts.append(
                types.Part(
                    function_response=types.FunctionResponse(
                        id=None if part.call_id in generated else part.call_id,
                        name=part.name,
                        response={"error" if part.is_error else "output": part.content},
                    )
                )
            )
        elif isinstance(part, TextPart) and (part.text or len(message.parts) == 1):
            parts.append(types.Part(text=part.text))  # a lone empty prompt still opens a turn
    if not parts:
        return None
    return types.Content(role="user", parts=parts)


def _signature_bytes(signature: str, message_index: int, part_index: int) -> bytes:
    try:
        return decode_signature(signature)
    except ValueError as exc:
        raise HistoryError(str(exc), message_index=message_index, part_index=part_index) from None


def _tool_call(
    call: types.FunctionCall, signature: str | None, response_id: str | None, index: int
) -> ToolCall:
    return ToolCall(
        id=call.id or generated_call_id(response_id, index),
        name=call.name or "",
        arguments=cast("dict[str, JsonValue]", call.args or {}),
        signature=signature,
        provider_details=None if call.id else _GENERATED,
    )


def _enum_value(value: object) -> str | None:
    if value is None:
        return None
    return str(getattr(value, "value", value))


def _details(
    raw_finish: str | None, response: types.GenerateContentResponse | None
) -> ProviderDetails | None:
    details: ProviderDetails = {}
    if raw_finish is not None:
        details["finish_reason"] = raw_finish
    feedback = response.prompt_feedback if response is not None else None
    if feedback is not None and feedback.block_reason is not None:
        details["block_reason"] = _enum_value(feedback.block_reason)
    return details or None


def _usage(metadata: types.GenerateContentResponseUsageMetadata | None) -> Usage | None:
    """`promptTokenCount` (which already counts cached tokens) plus tool-use prompt tokens in;
    candidates plus thoughts out; thoughts as thinking; cached content as cache reads."""
    if metadata is None:
        return None
    thoughts = metadata.thoughts_token_count or 0
    return Usage(
        input_tokens=(metadata.prompt_token_count or 0)
        + (metadata.tool_use_prompt_token_count or 0),
        output_tokens=(metadata.candidates_token_count or 0) + thoughts,
        thinking_tokens=thoughts,
        cache_read_tokens=metadata.cached_content_token_count or 0,
    )


def provider_error(exc: genai_errors.APIError, scope: str) -> ProviderError:
    """The `ProviderError` for an SDK exception: the service's own message, status code and
    status string (`INVALID_ARGUMENT`, `RESOURCE_EXHAUSTED`...)."""
    status = exc.code if isinstance(exc.code, int) else None  # pyright: ignore[reportUnnecessaryIsInstance]
    message = exc.message if isinstance(exc.message, str) and exc.message else str(exc)
    retryable = retryable_status(status, _RETRYABLE_STATUSES)
    return ProviderError(
        message,
        scope=scope,
        status=status,
        retryable=retryable,
        error_type=exc.status if isinstance(exc.status, str) else None,
    )


def _transport_error(exc: BaseException, scope: str) -> ProviderError:
    timeout = isinstance(exc, (TimeoutError, httpx2.TimeoutException))
    return connection_error(
        f"{'timeout' if timeout else 'connection error'}: {type(exc).__name__}: {exc}",
        scope=scope,
        timeout=timeout,
    )
