"""`BedrockModel`: reasoning models on AWS Bedrock through boto3's Converse API: Claude, and the
other families Converse serves (DeepSeek, OpenAI's models, Kimi, Qwen...).

```python
from thinkagent import Agent
from thinkagent.providers.claude import BedrockModel, ClaudeThinking

model = BedrockModel(
    "us.anthropic.claude-sonnet-4-5-20250929-v1:0", thinking=ClaudeThinking.budget(4096)
)
result = await Agent(model, tools=[get_weather]).run("What's the weather in Paris?")
```

`reasoningContent.reasoningText{text, signature}` becomes `ThinkingBlock.signed(text, signature)`
(`ThinkingBlock.plain(text)` without a signature) and `reasoningContent.redactedContent` (bytes)
`ThinkingBlock.redacted_payload(base64)`, holding the standard base64 of the exact bytes (replay
decodes them back); Kimi's `<think>` tags in its text become thinking blocks. Blocks keep the
order Bedrock returned them in. Each model family is its own scope with its own replay rule
(`_families`): Claude's signed thinking goes back byte for byte, here and on Claude's other
platforms; the other families get back only the reasoning they accept, in their own shape.

boto3 is synchronous: `converse` runs in a Bedrock worker thread and each `converse_stream` is
read by a thread of its own (`_bridge`); closing or cancelling the stream shuts the connection
down and joins that thread. See `docs/providers/bedrock.md`.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import functools
import hashlib
import importlib
import json
import os
import re
import weakref
from collections.abc import AsyncIterator, Callable, Hashable, Mapping, Sequence
from contextvars import ContextVar
from types import MappingProxyType
from typing import Any, cast

from pydantic import JsonValue

from ..._extras import needs
from ...errors import ConfigurationError, HistoryError, ProviderError
from ...history import ForeignReasoning
from ...messages import (
    Document,
    FinishReason,
    Image,
    Message,
    Part,
    SystemNote,
    TextPart,
    ThinkingBlock,
    ToolCall,
    ToolResult,
    Usage,
)
from ...stream import ModelDelta, PartEnd, StreamBuilder, WarningEvent
from .._common import (
    UNREADABLE,
    arguments_object,
    connection_error,
    copy_settings,
    interrupted,
    merge_settings,
    received,
    refuse_builtin_tools,
    retryable_status,
    tool_arguments,
    unreadable,
)
from .._tags import ThinkTagSplitter, split_think_tags
from ..base import (
    THINKING_LEVELS,
    MediaSupport,
    ModelProfile,
    ModelRequest,
    ModelResponse,
    ModelSettings,
    ModelStreamEvent,
    Thinking,
    ThinkingLevel,
    ToolDefinition,
    clamp_thinking,
)
from ._bridge import ReadFailure, StreamReader, in_worker
from ._families import BedrockFamily, bedrock_family
from ._rules import (
    CLEAR_AT_BETA,
    TOOL_CHANGES_BETA,
    ClaudeModel,
    ClaudeThinking,
    Effort,
    Prepared,
    PromptCache,
    finish_reason,
    raise_mapped,
    token_usage,
    transformations_warning,
)

__all__ = ["DEFAULT_MAX_TOKENS", "MEDIA", "SCOPE", "UNAVAILABLE_TOOL", "BedrockModel"]

# botocore ships no type information: its names are reached through `Any`.
_botocore_exceptions: Any = importlib.import_module("botocore.exceptions")
_ClientError: type[Exception] = _botocore_exceptions.ClientError
_EventStreamError: type[Exception] = _botocore_exceptions.EventStreamError
_BotoCoreError: type[Exception] = _botocore_exceptions.BotoCoreError
_ParamValidationError: type[Exception] = _botocore_exceptions.ParamValidationError
_NoCredentialsError: type[Exception] = _botocore_exceptions.NoCredentialsError
_NoRegionError: type[Exception] = _botocore_exceptions.NoRegionError

SCOPE = "bedrock"
"""The scope of Claude's messages on Bedrock (other families: `bedrock-<family>@<region>`)."""

DEFAULT_MAX_TOKENS = 8192
"""`inferenceConfig.maxTokens` when neither the model nor the request settings give one."""

UNAVAILABLE_TOOL = (
    "Used earlier in this conversation; not available in this request: do not call it."
)
"""The description of a tool the history used that the request does not offer."""

_IMAGE_FORMATS: Mapping[str, str] = {
    "image/png": "png",
    "image/jpeg": "jpeg",
    "image/gif": "gif",
    "image/webp": "webp",
}
_DOCUMENT_FORMATS: Mapping[str, str] = {
    "application/pdf": "pdf",
    "text/csv": "csv",
    "application/msword": "doc",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "docx",
    "application/vnd.ms-excel": "xls",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": "xlsx",
    "text/html": "html",
    "text/plain": "txt",
    "text/markdown": "md",
}
_MAX_IMAGE_BYTES = 3_750_000
_MAX_DOCUMENT_BYTES = 4_500_000

MEDIA = MediaSupport(
    types=frozenset({*_IMAGE_FORMATS, *_DOCUMENT_FORMATS}),
    urls=False,
    max_bytes=_MAX_DOCUMENT_BYTES,
    in_tool_results=True,
)
"""What Converse takes for Claude: PNG, JPEG, GIF and WebP images (3.75 MB each) and PDF, CSV,
Word, Excel, HTML, text and Markdown documents (4.5 MB each), as bytes (no URLs), also in tool
results (docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ImageBlock.html,
…/API_runtime_DocumentBlock.html)."""

_DOCUMENT_NAME = re.compile(r"[^A-Za-z0-9\s\-()\[\]]+")

_RETRYABLE_CODES = frozenset(
    {
        "throttlingexception",
        "serviceunavailableexception",
        "internalserverexception",
        "modelstreamerrorexception",
        "modelnotreadyexception",
        "modeltimeoutexception",
    }
)

_NATIVE_BETAS = frozenset({TOOL_CHANGES_BETA, CLEAR_AT_BETA})

_TRANSFORMATIONS_PATH = "/input_transformations"
"""Asks Converse to return Claude's `input_transformations` in `additionalModelResponseFields`."""

_EXTRA_HEADERS: ContextVar[Mapping[str, str] | None] = ContextVar(
    "thinkagent_bedrock_extra_headers", default=None
)
_HEADERS_HOOK_ID = "thinkagent-extra-headers"


class BedrockModel(ClaudeModel[Any]):
    """A model behind AWS Bedrock's Converse API, through a boto3 `bedrock-runtime` client.

    - `client`: your boto3 client (its credentials, region, retries and timeouts apply);
      built from the environment with botocore's `standard` retry mode when omitted
      (`region_name` picks the region then).
    - `thinking`: a `ClaudeThinking` (Claude models only), sent as
      `additionalModelRequestFields.thinking`; `None` leaves the model's default.
    - `effort`: `outputConfig.effort` (Claude models only; `ModelSettings(thinking=...)` sets
      any family's reasoning effort).
    - `max_tokens`: `inferenceConfig.maxTokens` (a request's `max_tokens` setting overrides it).
    - `foreign_reasoning`: `"drop"` (default) or `"text"` for reasoning that cannot go back as
      reasoning content (another scope's, or a block without a signature).
    - `settings`: default `ModelSettings`, under each request's own.
    - `additional_model_request_fields`: passed through (e.g. `{"anthropic_beta": [...]}`).
    - `extra_headers`: HTTP headers added to every request.
    - `scope`: the scope of this model's messages; by default `"bedrock"` for Claude and
      `"bedrock-<family>@<region>"` for the other families (`family`).

    Every option is read back through a read-only property of the same name.
    """

    def __init__(
        self,
        model_name: str,
        *,
        client: Any = None,
        thinking: ClaudeThinking | None = None,
        effort: Effort | None = None,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        foreign_reasoning: ForeignReasoning = "drop",
        settings: ModelSettings | None = None,
        additional_model_request_fields: Mapping[str, Any] | None = None,
        extra_headers: Mapping[str, str] | None = None,
        region_name: str | None = None,
        scope: str | None = None,
    ) -> None:
        family = bedrock_family(model_name)
        if not family.is_claude and (thinking is not None or effort is not None):
            raise ConfigurationError(
                f"{model_name} is not a Claude model: thinking= and effort= configure Claude; "
                "set its reasoning with ModelSettings(thinking=...)"
            )
        client = _client_from_environment(region_name) if client is None else client
        super().__init__(
            model_name,
            client=client,
            scope=scope or _scope(family, client),
            thinking=thinking,
            effort=effort,
            max_tokens=max_tokens,
            foreign_reasoning=foreign_reasoning,
            settings=settings,
        )
        self._family = family
        self._caches = family.is_claude and (self._info is None or self._info.caches_on_bedrock)
        # Converse declares no tool hidden until added (no `defer_loading`), and its messages
        # have no `clear_at`.
        self._deferred_tools = False
        self._turn_scoped_notes = False
        self._additional_fields = MappingProxyType(dict(additional_model_request_fields or {}))
        self._extra_headers = MappingProxyType(dict(extra_headers or {}))
        claude = family.is_claude
        self._profile = ModelProfile(
            native_output=claude and self._info is not None and self._info.structured_output,
            media=MEDIA if claude else MediaSupport(),
            reasoning=not claude or self._info is None or self._info.reasons,
        )

    @property
    def family(self) -> str:
        """The model family (`claude`, `deepseek`, `openai`, `moonshot`...)."""
        return self._family.name

    @property
    def additional_model_request_fields(self) -> Mapping[str, Any]:
        """Fields passed through in `additionalModelRequestFields` on every request."""
        return self._additional_fields

    @property
    def extra_headers(self) -> Mapping[str, str]:
        """HTTP headers added to every request."""
        return self._extra_headers

    @property
    def profile(self) -> ModelProfile:
        """What this model takes beyond text: for Claude, Converse's images and documents
        (`MEDIA`) and native structured output (`outputConfig.textFormat`, with thinking and
        tools) on Claude 4.5 and newer; the other families declare neither."""
        return self._profile

    def build_request(self, request: ModelRequest) -> dict[str, Any]:
        """The keyword arguments for `client.converse` / `client.converse_stream`.

        Raises `ConfigurationError` for settings the model or Converse would refuse, and
        `HistoryError` for a history it would refuse, before anything is sent.
        """
        params, prepared = self._build(request)
        params["messages"] = _messages(prepared, request)
        return params

    def _build(self, request: ModelRequest) -> tuple[dict[str, Any], Prepared]:
        """The keyword arguments for the Converse call but `messages` (a placeholder:
        `_messages` for the typed call, `_messages_json` for `_call`), and what was
        prepared."""
        refuse_builtin_tools(request.builtin_tools, "Bedrock Converse")
        choice = merge_settings(self.settings, request.settings).get("tool_choice")
        declared = _declared_tools(request, choice)
        if declared and self._family.tools_refusal is not None:
            raise ConfigurationError(
                f"{self.model_name} refuses tools: {self._family.tools_refusal}"
            )
        prepared = self._prepare(request, declared)
        settings = prepared.settings
        if settings.get("parallel_tool_calls") is False:
            raise ConfigurationError(
                "Bedrock Converse cannot disable parallel tool calls: leave parallel_tool_calls "
                "unset on BedrockModel"
            )
        params: dict[str, Any] = {"modelId": self.model_name, "messages": None}
        point = _cache_point(prepared.cache) if prepared.cache is not None else None
        if prepared.system:
            params["system"] = [{"text": prepared.system}]
            if point is not None:
                params["system"].append(point)
        inference: dict[str, Any] = {"maxTokens": prepared.max_tokens}
        copy_settings(
            settings,
            inference,
            temperature="temperature",
            top_p="topP",
            stop_sequences="stopSequences",
        )
        params["inferenceConfig"] = inference
        if prepared.tools:
            params["toolConfig"] = _tool_config(prepared.tools, choice if request.tools else None)
            if point is not None and not prepared.system:
                params["toolConfig"]["tools"].append(point)
        additional = dict(self._additional_fields)
        output: dict[str, Any] = {}
        if not self._family.is_claude:
            enabled = settings.get("thinking") not in (None, False)
            additional.update(self._family.reasoning_fields(prepared.effort, enabled=enabled))
        else:
            if prepared.thinking is not None:
                additional["thinking"] = prepared.thinking.to_param()
            # Converse carries system messages and their tool changes natively: no beta.
            betas = [b for b in prepared.betas if b not in _NATIVE_BETAS]
            if betas:
                given = [b for b in additional.get("anthropic_beta", []) if b not in betas]
                additional["anthropic_beta"] = [*given, *betas]
            if prepared.effort is not None:
                output["effort"] = prepared.effort
            if prepared.binding is not None:
                params["additionalModelResponseFieldPaths"] = [_TRANSFORMATIONS_PATH]
        if request.output is not None and request.output.mode == "native":
            output["textFormat"] = _text_format(request)
        if additional:
            params["additionalModelRequestFields"] = additional
        if output:
            params["outputConfig"] = output
        for key, value in settings.get("extra_body", {}).items():
            current = params.get(key)
            if isinstance(current, dict) and isinstance(value, Mapping):
                params[key] = {**current, **cast("Mapping[str, Any]", value)}
            else:
                params[key] = value
        return params, prepared

    def build_messages(self, messages: Sequence[Message]) -> list[dict[str, Any]]:
        """The Converse `messages` for a history: each family's reasoning replayed its way."""
        request = ModelRequest(messages=messages)
        return _messages(self._prepare(request, _declared_tools(request, None)), request)

    def _thinking_knob(
        self,
        knob: Thinking,
        thinking: ClaudeThinking | None,
        effort: Effort | None,
        max_tokens: int,
    ) -> tuple[ClaudeThinking | None, Effort | None, list[WarningEvent]]:
        """Claude maps the knob as on the Claude API; the other families set their reasoning
        level where they have one (`_families`: gpt-oss and Nova 2 low, medium, high; Qwen low,
        high) and report what they cannot honour (most reason whatever is asked; Nova reasons
        only when asked)."""
        if self._family.is_claude:
            return super()._thinking_knob(knob, thinking, effort, max_tokens)
        family = self._family
        warnings: list[WarningEvent] = []
        if knob is False:
            if family.off_by_default:
                return None, None, warnings
            warnings.append(
                WarningEvent(
                    code="thinking_not_disabled",
                    message=f"{self.model_name} always reasons: reasoning stays on",
                    scope=self.scope,
                )
            )
            lowest = family.efforts[0] if family.effort_field and family.efforts else None
            return None, cast("Effort | None", lowest), warnings
        if knob is True and (family.effort_field is not None or not family.off_by_default):
            return None, None, warnings
        if family.effort_field is None or not family.efforts:
            warnings.append(
                WarningEvent(
                    code="thinking_clamped",
                    message=f"{self.model_name} has no reasoning levels: {knob!r} was not sent",
                    scope=self.scope,
                )
            )
            return None, None, warnings
        assert knob is not True
        levels: list[ThinkingLevel] = [lv for lv in THINKING_LEVELS if lv in family.efforts]
        level, warning = clamp_thinking(knob, levels, scope=self.scope, model=self.model_name)
        return None, level, [warning] if warning is not None else []

    def _thinking_part(self, block: ThinkingBlock, native: bool) -> Part | None:
        """A family's own reasoning goes back in the shape it accepts (see `_families`)."""
        replay = self._family.replay
        if replay == "claude":
            return super()._thinking_part(block, native)
        if replay == "redacted":
            return block if block.redacted is not None else None
        if replay == "inline":
            return TextPart(text=f"<think>\n{block.text}\n</think>") if block.text.strip() else None
        if self.foreign_reasoning == "text" and block.text.strip():
            return TextPart(text=f"<thinking>\n{block.text}\n</thinking>")
        return None

    async def request(self, request: ModelRequest) -> ModelResponse:
        call, prepared = self._call(self.client.converse, request)
        settings = prepared.settings
        answer = in_worker(self.client, call)
        try:
            if "timeout" in settings:
                response = await asyncio.wait_for(answer, settings["timeout"])
            else:
                response = await answer
        except asyncio.TimeoutError:
            raise _timeout(settings) from None
        except Exception as exc:
            raise_mapped(self.map_error(exc), exc)
        try:  # botocore hands back what it could parse of a body that is not JSON
            return received(self._response(response, prepared))
        except UNREADABLE as exc:
            raise unreadable(exc, scope=self.scope) from exc

    def parse_response(self, response: Mapping[str, Any]) -> ModelResponse:
        """The shared form of a `converse` response: blocks in order, usage, stop reason, and a
        `thinking_dropped` warning for the thinking the service says it dropped."""
        return self._response(response, None)

    def _response(self, response: Mapping[str, Any], prepared: Prepared | None) -> ModelResponse:
        parts: list[Part] = []
        inline = self._family.replay == "inline"
        for block in response["output"]["message"]["content"]:
            if "text" in block:
                if inline:
                    parts += _split(block["text"])
                else:
                    parts.append(TextPart(text=block["text"]))
            elif "reasoningContent" in block:
                part = _reasoning(block["reasoningContent"])
                if part is not None:
                    parts.append(part)
            elif "toolUse" in block:
                use = block["toolUse"]
                parts.append(ToolCall(id=use["toolUseId"], name=use["name"], arguments=_args(use)))
        parts = self._family.received(parts)
        stop_reason = cast("str | None", response.get("stopReason"))
        transformations = _transformations(response.get("additionalModelResponseFields"))
        warnings = [*(prepared.warnings if prepared is not None else ())]
        dropped = transformations_warning(transformations, self.scope)
        if dropped is not None:
            warnings.append(dropped)
        return ModelResponse(
            Message(
                role="assistant",
                parts=tuple(parts),
                scope=self.scope,
                model=self.model_name,
                usage=_usage(response.get("usage")),
                finish_reason=self.map_finish_reason(stop_reason),
                provider_details=self._details(prepared, parts, stop_reason, None, transformations),
            ),
            warnings=tuple(warnings),
        )

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelStreamEvent]:
        """Warnings, then deltas as Bedrock streams them with a `PartEnd` at each block's end,
        then the complete `ModelResponse`. Raises `StreamInterrupted` (with the unsigned partial
        message) when the stream ends before `messageStop` and `metadata`, and `ProviderError`
        for an exception event."""
        call, prepared = self._call(self.client.converse_stream, request)
        for warning in prepared.warnings:
            yield warning
        timeout = prepared.settings.get("timeout")
        parts = _Stream(self.scope, inline=self._family.replay == "inline")
        broken: BaseException | None = None
        try:
            async with StreamReader(self.client, call, timeout) as reader:
                async for batch in reader:
                    for event in batch:
                        for out in parts.fold(event):
                            yield out
        except asyncio.TimeoutError:
            raise _timeout(prepared.settings) from None
        except ReadFailure as failure:
            if not failure.streaming or isinstance(failure.error, _ClientError):
                raise_mapped(self.map_error(failure.error), failure.error)
            broken = failure.error  # a dropped connection, a corrupt frame
        if parts.stop is None or parts.usage is None:
            reason = (
                "the stream ended before messageStop and metadata"
                if broken is None
                else f"the stream broke before messageStop: {broken}"
            )
            raise interrupted(
                reason, parts.builder, scope=self.scope, model=self.model_name
            ) from broken
        yield parts.response(self, prepared)

    def _call(
        self, method: Callable[..., Any], request: ModelRequest
    ) -> tuple[Callable[[], Any], Prepared]:
        """The blocking Converse call for `request` (`method` with its parameters and headers),
        and what was prepared for it."""
        params, prepared = self._build(request)
        headers = _extra_headers(self.client, self._extra_headers, prepared.settings)
        if list(params)[:2] != ["modelId", "messages"]:  # a setting's extra body moved them
            params["messages"] = _messages(prepared, request)
            return functools.partial(_call, method, params, headers), prepared
        # The conversation goes as JSON text encoded once per part, put into the body botocore
        # serialised around an empty list (`_put_messages`): same bytes, without botocore's
        # validation and serialisation of every message on every request (ADR 180).
        try:
            body = self._messages_json(prepared)
        except binascii.Error:
            raise _bad_payload(request.messages) from None
        _register_body_hook(self.client)
        params["messages"] = []
        return functools.partial(_call, method, params, headers, body), prepared

    def _messages_json(self, prepared: Prepared) -> str:
        """The JSON text botocore writes for `messages` (`_messages`), from each part's JSON
        encoded once (the cache points' blocks each time); each turn's JSON kept with the message
        it ends (`_turns_encoded`)."""
        turns = self._turns_encoded(
            prepared, lambda k, role, parts: self._turn_json(prepared, k, role, parts)
        )
        return "[" + ", ".join(turns) + "]"

    def _turn_json(self, prepared: Prepared, k: int, role: str, parts: list[Part]) -> str:
        """Turn `k`'s JSON as botocore writes it, from each part's JSON encoded once (with a
        cache point after the part that ends a cached prefix)."""
        blocks: list[str] = []
        if role == "system":
            blocks = [json.dumps(block) for block in _system_content(parts)]
        else:
            get = self._per_message.get
            cache = prepared.cache
            marks = {j for turn, j in cache.marks if turn == k} if cache is not None else ()
            for j, part in enumerate(parts):
                blocks.append(get(part, _BLOCK_JSON, _block_json, part))
                if j in marks:
                    assert cache is not None
                    blocks.append(json.dumps(_cache_point(cache)))
        return f'{{"role": "{role}", "content": [{", ".join(blocks)}]}}'

    def map_error(self, exc: BaseException) -> BaseException:
        """The thinkagent error for a boto3/botocore exception: `ProviderError` for the
        service's refusals (the code, status and message it sent) and for connection failures,
        `ConfigurationError` for invalid parameters and missing credentials; anything else comes
        back as it is."""
        if isinstance(exc, _ClientError):
            response: Any = getattr(exc, "response", {}) or {}
            error: Any = response.get("Error") or {}
            code = cast("str | None", error.get("Code"))
            message = cast("str", error.get("Message") or str(exc))
            status: int | None = None
            if not isinstance(exc, _EventStreamError):  # an exception event has no status
                metadata: Any = response.get("ResponseMetadata") or {}
                status = cast("int | None", metadata.get("HTTPStatusCode"))
            retryable = (code is not None and code.lower() in _RETRYABLE_CODES) or retryable_status(
                status
            )
            return ProviderError(
                message, scope=self.scope, status=status, retryable=retryable, error_type=code
            )
        if isinstance(exc, _ParamValidationError):
            return ConfigurationError(f"Bedrock refused the request parameters: {exc}")
        if isinstance(exc, _NoCredentialsError):
            return ConfigurationError(
                "no AWS credentials found: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or "
                "AWS_PROFILE), or pass client=boto3.client('bedrock-runtime', ...)"
            )
        if isinstance(exc, _BotoCoreError):  # connection failures and timeouts, after retries
            return ProviderError(
                str(exc), scope=self.scope, retryable=True, error_type=type(exc).__name__
            )
        return exc

    @staticmethod
    def map_finish_reason(raw: str | None) -> FinishReason | None:
        """Converse's `stopReason`, normalised (None for values it does not know)."""
        return finish_reason(raw)


def _scope(family: BedrockFamily, client: Any) -> str:
    """`bedrock` for Claude; `bedrock-<family>@<region>` for the other families (their reasoning
    is readable only by its issuer, Kimi K3's only in the region that made it)."""
    if family.is_claude:
        return SCOPE
    region = getattr(getattr(client, "meta", None), "region_name", None)
    return f"{SCOPE}-{family.name}@{region}" if region else f"{SCOPE}-{family.name}"


def _client_from_environment(region_name: str | None) -> Any:
    """A `bedrock-runtime` client from the environment. Its retries are the ones the
    environment or the AWS profile chooses (`AWS_RETRY_MODE`, `retry_mode`: `adaptive` adds
    client-side rate limiting after throttling), else botocore's `standard` mode."""
    with needs("bedrock", "BedrockModel"):
        boto3: Any = importlib.import_module("boto3")
    config: Any = importlib.import_module("botocore.config")
    core: Any = importlib.import_module("botocore.session").get_session()
    chosen = os.environ.get("AWS_RETRY_MODE") or core.get_scoped_config().get("retry_mode")
    try:
        return boto3.session.Session(botocore_session=core, region_name=region_name).client(
            "bedrock-runtime",
            config=None if chosen else config.Config(retries={"mode": "standard"}),
        )
    except _NoRegionError as exc:
        raise ConfigurationError(
            "no AWS region: set AWS_DEFAULT_REGION (or a region in the AWS profile), or pass region_name=..."
        ) from exc


def _call(
    method: Callable[..., Any], params: dict[str, Any], headers: Any, messages: str | None = None
) -> Any:
    if headers:
        _EXTRA_HEADERS.set(headers)  # this thread's context only
    if messages is not None:
        _MESSAGES.set(messages)
    return method(**params)


_BLOCK_JSON = "bedrock-block-json"

_MESSAGES: ContextVar[str | None] = ContextVar("thinkagent_bedrock_messages", default=None)
"""The JSON text of the `messages` of the call the current worker thread makes."""

_BODY_HOOK_ID = "thinkagent-messages-body"

_EMPTY_MESSAGES = b'{"messages": []'
"""How a Converse body serialised with no messages starts (`messages` is its first member)."""


def _block_json(part: Part) -> str:
    """A block as botocore writes it: JSON with its bytes as standard base64."""
    return json.dumps(_block(part), default=_b64)


def _register_body_hook(client: Any) -> None:
    """Register `_put_messages` on `client`, once."""
    _register_once(client, "before-call", _put_messages, _BODY_HOOK_ID)


_REGISTERED: weakref.WeakKeyDictionary[Any, set[str]] = weakref.WeakKeyDictionary()
"""The hooks registered on each client's event emitter, by hook id."""


def _register_once(client: Any, event: str, handler: Callable[..., None], hook_id: str) -> None:
    """Register `handler` first for `event` of both Converse operations on `client`, once:
    botocore inspects a handler's signature on every registration, even one it then skips for
    its unique id, which would cost every request."""
    events: Any = client.meta.events
    registered = _REGISTERED.setdefault(events, set())
    if hook_id in registered:
        return
    for operation in ("Converse", "ConverseStream"):
        events.register_first(
            f"{event}.bedrock-runtime.{operation}", handler, unique_id=f"{hook_id}-{operation}"
        )
    registered.add(hook_id)


def _put_messages(params: dict[str, Any], **_: Any) -> None:
    """botocore's `before-call` hook: put the call's messages (`_MESSAGES`, JSON text) into the
    body it serialised with none, before it is signed and sent."""
    messages = _MESSAGES.get()
    if messages is None:
        return
    body = params.get("body")
    if not isinstance(body, bytes) or not body.startswith(_EMPTY_MESSAGES):
        raise RuntimeError(  # pragma: no cover - a botocore that serialises otherwise
            "botocore serialised the Converse body in an unexpected shape: thinkagent cannot "
            "put the messages in"
        )
    params["body"] = b'{"messages": ' + messages.encode() + body[len(_EMPTY_MESSAGES) :]


def _extra_headers(
    client: Any, defaults: Mapping[str, str], settings: ModelSettings
) -> Mapping[str, str] | None:
    """The headers to add to a request (the model's, under the request's), with the hook that
    adds them registered on the client (once)."""
    headers = settings.get("extra_headers")
    if defaults:
        headers = {**defaults, **(headers or {})}
    if headers:
        _register_once(client, "before-sign", _add_extra_headers, _HEADERS_HOOK_ID)
    return headers


def _add_extra_headers(request: Any, **_: Any) -> None:
    headers = _EXTRA_HEADERS.get()
    if headers:
        for name, value in headers.items():
            request.headers[name] = value


def _declared_tools(request: ModelRequest, choice: str | None) -> tuple[ToolDefinition, ...]:
    """The tools a request declares: those on offer, none for `tool_choice="none"` (Converse
    has no such choice), and for a request that offers none over a history that used some, each
    tool the history named, as unavailable: Converse refuses toolUse and toolResult blocks
    without a `toolConfig` ("The toolConfig field must be defined when using toolUse and
    toolResult content blocks."). Derived from the history alone, so every request of a
    conversation declares the same tools (they are part of the prefix Claude binds thinking to).
    """
    if request.tools and choice != "none":
        return tuple(request.tools)
    used = _used_tools(request.messages)
    if request.tools:
        if used:
            raise ConfigurationError(
                "Bedrock Converse has no tool_choice 'none', and a history with tool calls needs "
                "the tools offered: use tool_choice 'auto'"
            )
        return ()
    return tuple(
        ToolDefinition(name, UNAVAILABLE_TOOL, {"type": "object", "properties": {}})
        for name in used
    )


def _used_tools(messages: Sequence[Message]) -> list[str]:
    names: dict[str, None] = {}
    for message in messages:
        for part in message.parts:
            if isinstance(part, (ToolCall, ToolResult)):
                names.setdefault(part.name, None)
    return list(names)


def _tool_config(tools: Sequence[ToolDefinition], choice: str | None) -> dict[str, Any]:
    specs: list[dict[str, Any]] = []
    for tool in tools:
        spec: dict[str, Any] = {"name": tool.name, "inputSchema": {"json": tool.parameters}}
        if tool.description:
            spec["description"] = tool.description
        specs.append({"toolSpec": spec})
    config: dict[str, Any] = {"tools": specs}
    if choice == "required":
        config["toolChoice"] = {"any": {}}
    elif choice not in (None, "auto", "none"):
        config["toolChoice"] = {"tool": {"name": choice}}
    return config


def _text_format(request: ModelRequest) -> dict[str, Any]:
    """`outputConfig.textFormat` for native structured output (the schema goes as JSON text)."""
    assert request.output is not None
    schema: dict[str, Any] = {
        "schema": json.dumps(request.output.schema),
        "name": request.output.name,
    }
    if request.output.description:
        schema["description"] = request.output.description
    return {"type": "json_schema", "structure": {"jsonSchema": schema}}


def _messages(prepared: Prepared, request: ModelRequest) -> list[dict[str, Any]]:
    try:
        messages = [
            {
                "role": role,
                "content": _system_content(parts)
                if role == "system"
                else [_block(part) for part in parts],
            }
            for role, parts in prepared.turns
        ]
    except binascii.Error:
        raise _bad_payload(request.messages) from None
    cache = prepared.cache
    if cache is not None:
        point = _cache_point(cache)
        for turn, part in cache.marks:
            cast("list[dict[str, Any]]", messages[turn]["content"]).insert(part + 1, point)
    return messages


def _system_content(parts: Sequence[Part]) -> list[dict[str, Any]]:
    """A turn's system notes as the content of one `system` message: their text, then their
    tool changes by reference (`toolAddition` / `toolRemoval`)."""
    content: list[dict[str, Any]] = []
    for note in cast("Sequence[SystemNote]", parts):
        if note.text:
            content.append({"text": note.text})
        # guess: the reference's `type` is Anthropic's `tool_reference` (Converse documents
        # the field, not its values)
        content += [
            {"toolAddition": {"tool": {"type": "tool_reference", "name": name}}}
            for name in note.add_tools
        ]
        content += [
            {"toolRemoval": {"tool": {"type": "tool_reference", "name": name}}}
            for name in note.remove_tools
        ]
    return content


def _cache_point(cache: PromptCache) -> dict[str, Any]:
    """A breakpoint: a `cachePoint` block after the block that ends the cached prefix, with
    the lifetime when one was asked for."""
    if cache.ttl is None:
        return {"cachePoint": {"type": "default"}}
    return {"cachePoint": {"type": "default", "ttl": cache.ttl}}


def _block(part: Part) -> dict[str, Any]:
    if isinstance(part, ThinkingBlock):
        if part.redacted is not None:
            return {
                "reasoningContent": {
                    "redactedContent": base64.b64decode(part.redacted, validate=True)
                }
            }
        return {
            "reasoningContent": {"reasoningText": {"text": part.text, "signature": part.signature}}
        }
    if isinstance(part, TextPart):
        return {"text": part.text}
    if isinstance(part, ToolCall):
        return {
            "toolUse": {"toolUseId": part.id, "name": part.name, "input": arguments_object(part)}
        }
    if isinstance(part, (Image, Document)):
        return _media(part)
    assert isinstance(part, ToolResult), part
    content = part.content
    if isinstance(content, dict):
        items: list[dict[str, Any]] = [{"json": content}]
    else:
        text = part.content_text()
        # A blank text block is refused where Converse checks it: an empty result goes as
        # no content at all.
        items = [{"text": text}] if text.strip() else []
    items += [_media(m) for m in part.media]
    return {
        "toolResult": {
            "toolUseId": part.call_id,
            "content": items,
            "status": "error" if part.is_error else "success",
        }
    }


def _media(part: Image | Document) -> dict[str, Any]:
    """An `image` or `document` block with its bytes (Converse takes no URLs)."""
    if part.data is None:
        raise ConfigurationError(
            f"Bedrock Converse takes no {part.kind} by URL ({part.url}): give the bytes"
        )
    media_type = part.media_type or ""
    size = len(part.data)
    if isinstance(part, Image):
        limit, formats = _MAX_IMAGE_BYTES, _IMAGE_FORMATS
    else:
        limit, formats = _MAX_DOCUMENT_BYTES, _DOCUMENT_FORMATS
    if media_type not in formats:
        raise ConfigurationError(f"Bedrock Converse takes no {part.kind} of type {media_type!r}")
    if size > limit:
        raise ConfigurationError(
            f"the {part.kind} has {size} bytes, over Converse's limit of {limit} per {part.kind}"
        )
    if isinstance(part, Image):
        return {"image": {"format": formats[media_type], "source": {"bytes": part.data}}}
    document = {
        "format": formats[media_type],
        "name": _document_name(part),
        "source": {"bytes": part.data},
    }
    return {"document": document}


def _document_name(part: Document) -> str:
    """The document's name as Converse requires it (letters, digits, single spaces, hyphens,
    parentheses and square brackets), or one derived from its bytes: the same document always
    gets the same name, so a replayed conversation does not change."""
    name = " ".join(_DOCUMENT_NAME.sub("-", part.name or "").split())
    if not name:
        assert part.data is not None
        name = f"document-{hashlib.sha256(part.data).hexdigest()[:12]}"
    return name[:200]


def _bad_payload(messages: Sequence[Message]) -> HistoryError:
    for i, message in enumerate(messages):
        if message.scope != SCOPE:
            continue
        for j, part in enumerate(message.parts):
            if isinstance(part, ThinkingBlock) and part.redacted is not None:
                try:
                    base64.b64decode(part.redacted, validate=True)
                except binascii.Error:
                    return HistoryError(
                        "a Bedrock redacted reasoning payload is not valid base64",
                        message_index=i,
                        part_index=j,
                    )
    return HistoryError("a Bedrock redacted reasoning payload is not valid base64", message_index=0)


def _split(text: str) -> list[Part]:
    """A text block with its reasoning inline (Kimi), as thinking and text parts."""
    return [
        ThinkingBlock.plain(segment) if thinking else TextPart(text=segment)
        for thinking, segment in split_think_tags(text)
    ]


def _transformations(fields: object) -> list[dict[str, Any]]:
    """Claude's `input_transformations`, from `additionalModelResponseFields`."""
    raw = (
        cast("Mapping[str, Any]", fields).get("input_transformations")
        if isinstance(fields, Mapping)
        else None
    )
    if not isinstance(raw, list):
        return []
    return [cast("dict[str, Any]", t) for t in cast("list[Any]", raw) if isinstance(t, dict)]


class _Stream:
    """One response's stream: its events folded into a `StreamBuilder` (a text block of a
    family that reasons inline split by its tags, each side of a tag a part of its own), and
    what `messageStop` and `metadata` said."""

    def __init__(self, scope: str, *, inline: bool) -> None:
        self.builder = StreamBuilder(json_arguments=True)
        self.scope = scope
        self.transformations: list[dict[str, Any]] = []
        self.stop: Mapping[str, Any] | None = None
        self.usage: Mapping[str, Any] | None = None
        self._splitters: dict[int, ThinkTagSplitter] | None = {} if inline else None
        self._keys: dict[int, list[Hashable]] = {}

    def fold(self, event: Mapping[str, Any]) -> Sequence[ModelDelta | PartEnd | WarningEvent]:
        """The deltas, part ends and warnings one event gives (the thinking the service
        dropped is known at `messageStop`)."""
        body = event.get("contentBlockDelta")
        if body is not None:  # the hot path: one event per delta
            return self._delta(body)
        if "contentBlockStart" in event:
            out = self._start(event["contentBlockStart"])
        elif "contentBlockStop" in event:
            out = self._end(event["contentBlockStop"]["contentBlockIndex"])
        elif "messageStop" in event:
            stop: Mapping[str, Any] = event["messageStop"]
            self.stop = stop
            self.transformations = _transformations(stop.get("additionalModelResponseFields"))
            out = [transformations_warning(self.transformations, self.scope)]
        elif "metadata" in event:
            self.usage = event["metadata"].get("usage")
            out = []
        else:  # messageStart (the role): no part
            out = []
        return [o for o in out if o is not None]

    def _delta(self, body: Mapping[str, Any]) -> Sequence[ModelDelta]:
        index = body["contentBlockIndex"]
        delta = body["delta"]
        if "text" in delta:
            if self._splitters is not None:
                splitter = self._splitters.setdefault(index, ThinkTagSplitter())
                segments = (self._segment(index, s) for s in splitter.feed(delta["text"]))
                return [d for d in segments if d is not None]
            return _one(self.builder.text(index, delta["text"]))
        if "reasoningContent" in delta:
            reasoning = delta["reasoningContent"]
            if "text" in reasoning:
                return _one(self.builder.thinking(index, reasoning["text"]))
            if "signature" in reasoning:
                return _one(self.builder.thinking(index, signature=reasoning["signature"]))
            if "redactedContent" in reasoning:
                redacted = _b64(reasoning["redactedContent"])
                return _one(self.builder.thinking(index, redacted=redacted))
            return ()  # a reasoning field this adapter does not know
        if "toolUse" in delta:
            arguments = delta["toolUse"].get("input") or ""
            return _one(self.builder.tool_call(index, arguments=arguments))
        return ()  # content the shared schema has no part for (citations...)

    def _segment(self, index: int, segment: tuple[int, bool, str]) -> ModelDelta | None:
        number, thinking, text = segment
        key = (index, number)
        keys = self._keys.setdefault(index, [])
        if key not in keys:
            keys.append(key)
        return self.builder.thinking(key, text) if thinking else self.builder.text(key, text)

    def _start(self, body: Mapping[str, Any]) -> list[ModelDelta | PartEnd | WarningEvent | None]:
        """A tool call's start carries its id and name; other blocks open with their first
        delta."""
        use = body["start"].get("toolUse")
        if use is None:
            return []
        index = body["contentBlockIndex"]
        return [self.builder.tool_call(index, id=use["toolUseId"], name=use["name"])]

    def _end(self, index: int) -> list[ModelDelta | PartEnd | WarningEvent | None]:
        splitter = self._splitters.pop(index, None) if self._splitters is not None else None
        if splitter is None:
            return [self.builder.end(index)]
        out: list[ModelDelta | PartEnd | WarningEvent | None] = [
            self._segment(index, s) for s in splitter.end()
        ]
        return out + [self.builder.end(key) for key in self._keys.pop(index, [])]

    def response(self, model: BedrockModel, prepared: Prepared) -> ModelResponse:
        """The response a finished stream describes."""
        assert self.stop is not None
        stop_reason = self.stop.get("stopReason")
        transformations = self.transformations
        message = self.builder.message(
            scope=model.scope,
            model=model.model_name,
            usage=_usage(self.usage),
            finish_reason=model.map_finish_reason(stop_reason),
        )
        details = model._details(  # pyright: ignore[reportPrivateUsage]
            prepared, message.parts, stop_reason, None, transformations
        )
        dropped = transformations_warning(transformations, model.scope)
        parts = tuple(model._family.received(message.parts))  # pyright: ignore[reportPrivateUsage]
        return ModelResponse(
            message.model_copy(update={"parts": parts, "provider_details": details}),
            warnings=(*prepared.warnings, *((dropped,) if dropped is not None else ())),
        )


def _one(delta: ModelDelta | None) -> tuple[ModelDelta, ...]:
    """The deltas to yield for one folded event."""
    return () if delta is None else (delta,)


def _args(use: Mapping[str, Any]) -> dict[str, JsonValue] | str:
    arguments = use.get("input")
    return {} if arguments is None else tool_arguments(arguments)


def _b64(data: bytes | str) -> str:
    if isinstance(data, str):  # already base64 (a parsed JSON body, not botocore's bytes)
        return data
    return base64.b64encode(data).decode("ascii")


def _reasoning(content: Mapping[str, Any]) -> ThinkingBlock | None:
    if "redactedContent" in content:
        return ThinkingBlock.redacted_payload(_b64(content["redactedContent"]))
    text_block = content.get("reasoningText")
    if text_block is None:
        return None
    text = text_block.get("text", "")
    signature = text_block.get("signature")
    if signature is not None:
        return ThinkingBlock.signed(text, signature)
    return ThinkingBlock.plain(text) if text else None


def _usage(usage: Mapping[str, Any] | None) -> Usage:
    if not usage:
        return Usage()
    return token_usage(
        usage.get("inputTokens"),
        usage.get("cacheReadInputTokens"),
        usage.get("cacheWriteInputTokens"),
        usage.get("outputTokens"),
    )


def _timeout(settings: ModelSettings) -> ProviderError:
    return connection_error(
        f"no response within the {settings.get('timeout')} s timeout", scope=SCOPE, timeout=True
    )
