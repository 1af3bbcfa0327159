"""`OpenAIChatModel`: reasoning models behind Chat Completions, through the official `openai` SDK.

```python
from thinkagent import Agent
from thinkagent.providers.openai import OpenAIChatModel

model = OpenAIChatModel("deepseek-reasoner", dialect="deepseek")   # DEEPSEEK_API_KEY
result = await Agent(model, tools=[get_weather]).run("What's the weather in Paris?")
```

One class serves OpenAI, Azure OpenAI and the OpenAI-compatible reasoning endpoints. What
differs between them is the *dialect* (`ChatDialect`, in `dialects`): where the reasoning text
comes back (`reasoning_content`, `reasoning`, or inline `<think>...</think>` in the content) and
when it must be sent back. Reasoning captured this way carries no proof: it becomes a plain
`ThinkingBlock`, first in the message, tagged with the dialect's scope (`"deepseek"`...).
OpenAI's own endpoint returns no reasoning text (only its token count), and gets none back.
See `docs/providers/openai.md`.
"""

from __future__ import annotations

import os
import re
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any, cast

import openai
from openai.types.chat import ChatCompletion, ChatCompletionChunk
from openai.types.chat.chat_completion_chunk import ChoiceDelta, ChoiceDeltaToolCall
from openai.types.completion_usage import CompletionUsage

from ...errors import ConfigurationError, ProviderError
from ...history import ForeignReasoning, for_scope
from ...messages import (
    FinishReason,
    Message,
    Part,
    ProviderDetails,
    TextPart,
    ThinkingBlock,
    ToolCall,
    ToolResult,
    Usage,
)
from ...stream import StreamBuilder, TextDelta, ThinkingDelta, ToolCallDelta
from .._common import (
    UNREADABLE,
    arguments_json,
    copy_settings,
    merge_settings,
    request_options,
    unreadable,
)
from ..base import ModelRequest, ModelResponse, ModelSettings, ModelStreamEvent
from ._tags import Segment, ThinkTagSplitter, join_think_tags, split_think_tags
from ._wire import (
    SDK_ERRORS,
    STREAM_BREAKS,
    OpenAIAdapter,
    OpenAIThinking,
    add_hint,
    client_from_environment,
    set_tool_choice,
    user_items,
)
from .dialects import ChatDialect, ReplayRule, resolve_dialect

__all__ = ["OpenAIChatModel"]

_REASONING_MODEL = re.compile(r"^(?:o\d|gpt-5|codex-)")

_FINISH: Mapping[str, FinishReason] = {
    "stop": "stop",
    "tool_calls": "tool_call",
    "function_call": "tool_call",
    "length": "length",
    "content_filter": "content_filter",
}

# Stream part keys besides a tool call's own index (an int) and a `<think>` segment's.
_REASONING = "reasoning"
_CONTENT = "content"
_SEGMENT = "segment"


class OpenAIChatModel(OpenAIAdapter):
    """A model behind Chat Completions (OpenAI, Azure OpenAI, or a compatible endpoint),
    through `openai.AsyncOpenAI` / `openai.AsyncAzureOpenAI`.

    - `client`: your client (its retries, timeouts and base URL apply); built from the
      environment when omitted (see `ChatDialect.base_url`).
    - `dialect`: a name from `DIALECTS` (`"deepseek"`, `"qwen"`, `"vllm"`, `"moonshot"`/`"kimi"`,
      `"openrouter"`, `"ollama"`, `"groq"`, `"think_tags"`, `"minimax"`, `"openai"`, `"azure"`,
      `"compatible"`) or a `ChatDialect`. Omitted: `azure` for an Azure client, else from the
      base URL's host, else `compatible` (reasoning captured, never sent back).
    - `thinking`: an `OpenAIThinking`; its `effort` is sent as `reasoning_effort`. Chat
      Completions has no reasoning summary, so a `summary` is refused.
    - `foreign_reasoning`: what happens to reasoning from another scope: `"drop"` (default)
      or `"text"` (sent as plain text).
    - `settings`: default `ModelSettings`, under each request's own.
    - `extra_body`, `extra_headers`: passed through on every request.
    """

    def __init__(
        self,
        model_name: str,
        *,
        client: openai.AsyncOpenAI | None = None,
        dialect: str | ChatDialect | None = None,
        thinking: OpenAIThinking | None = None,
        foreign_reasoning: ForeignReasoning = "drop",
        settings: ModelSettings | None = None,
        extra_body: Mapping[str, Any] | None = None,
        extra_headers: Mapping[str, str] | None = None,
    ) -> None:
        if isinstance(thinking, OpenAIThinking) and thinking.summary is not None:
            raise ConfigurationError(
                "Chat Completions has no reasoning summary: leave OpenAIThinking.summary unset "
                "(or use OpenAIResponsesModel, which has one)"
            )
        given = resolve_dialect(dialect) if dialect is not None else None
        if client is None:
            client = _client_from_environment(given)
        self._dialect = given if given is not None else resolve_dialect(None, client)
        super().__init__(
            model_name,
            client=client,
            scope=self._dialect.name,
            thinking=thinking,
            foreign_reasoning=foreign_reasoning,
            settings=settings,
            extra_body=extra_body,
            extra_headers=extra_headers,
        )
        source = self._dialect.reasoning
        self._fields: tuple[str, ...] = (
            ("reasoning_content", "reasoning")
            if source == "auto"
            else (source,)
            if source in ("reasoning_content", "reasoning")
            else ()
        )
        self._tags = self._dialect.tags if source == "think_tags" else None
        self._instructions_role = (
            "developer"
            if self._dialect.developer_role and _REASONING_MODEL.match(model_name)
            else "system"
        )

    @property
    def dialect(self) -> ChatDialect:
        """The endpoint's dialect: its name is the scope this model's messages are tagged with."""
        return self._dialect

    def build_request(self, request: ModelRequest) -> dict[str, Any]:
        """The keyword arguments for `client.chat.completions.create` (without `stream`).

        Raises `ConfigurationError` for a `tool_choice` naming no tool on offer.
        """
        settings = merge_settings(self.settings, request.settings)
        messages = self.build_messages(request.messages)
        if request.instructions:
            messages.insert(0, {"role": self._instructions_role, "content": request.instructions})
        params: dict[str, Any] = {"model": self.model_name, "messages": messages}
        if request.tools:
            tools: list[dict[str, Any]] = []
            for tool in request.tools:
                function: dict[str, Any] = {"name": tool.name, "parameters": tool.parameters}
                if tool.description:
                    function["description"] = tool.description
                tools.append({"type": "function", "function": function})
            params["tools"] = tools
            set_tool_choice(params, settings, request.tools, _named_tool_choice)
        if self.thinking is not None and self.thinking.effort is not None:
            params["reasoning_effort"] = self.thinking.effort
        copy_settings(
            settings,
            params,
            max_tokens=self._dialect.max_tokens_param,
            temperature="temperature",
            top_p="top_p",
            stop_sequences="stop",
        )
        request_options(params, settings, self._extra_body, self._extra_headers)
        return params

    def build_messages(self, messages: Sequence[Message]) -> list[dict[str, Any]]:
        """The `messages` parameter for a history (without the instructions).

        User turns become their `tool` messages, then a `user` message for their text.
        Assistant turns send their text and tool calls (arguments exactly as received); their
        reasoning goes back only where the dialect's `replay` rule asks, in its field (or
        inline between its tags), and only when it was recorded: nothing is invented.
        """
        sent = for_scope(messages, self.scope, foreign_reasoning=self.foreign_reasoning)
        replay = _replayed(sent, self._dialect.replay, self.scope)
        field = None if self._tags is not None else (self._fields or ("reasoning_content",))[0]
        out: list[dict[str, Any]] = []
        for i, message in enumerate(sent):
            if message.role == "user":
                out += user_items(message, _tool_message, "text")
                continue
            wire = _assistant(message, i in replay, field, self._tags)
            if wire is not None:
                out.append(wire)
        return out

    async def request(self, request: ModelRequest) -> ModelResponse:
        params = self.build_request(request)
        try:
            completion = cast("ChatCompletion", await self.client.chat.completions.create(**params))
        except SDK_ERRORS as exc:
            raise self.map_error(exc) from exc
        try:
            return self.parse_response(completion)
        except UNREADABLE as exc:
            raise unreadable(exc, scope=self.scope) from exc

    def parse_response(self, completion: ChatCompletion) -> ModelResponse:
        """The shared form of an SDK `ChatCompletion`: reasoning first, then the content (split
        at reasoning tags for `think_tags`), then the tool calls; usage and finish reason."""
        if not completion.choices:
            raise ProviderError(
                "the response has no choices", scope=self.scope, error_type="no_choices"
            )
        choice = completion.choices[0]
        message = choice.message
        parts: list[Part] = []
        reasoning = _reasoning(message.model_extra, self._fields)
        if reasoning:
            parts.append(ThinkingBlock(text=reasoning))
        content = message.content
        if content:
            if self._tags is not None:
                for thinking, text in split_think_tags(content, self._tags):
                    parts.append(ThinkingBlock(text=text) if thinking else TextPart(text=text))
            else:
                parts.append(TextPart(text=content))
        for call in message.tool_calls or ():
            if call.type == "function":
                parts.append(
                    ToolCall(id=call.id, name=call.function.name, arguments=call.function.arguments)
                )
        return ModelResponse(
            Message(
                role="assistant",
                parts=tuple(parts),
                scope=self.scope,
                model=completion.model or self.model_name,
                id=completion.id,
                usage=_usage(completion.usage),
                finish_reason=self.map_finish_reason(choice.finish_reason),
                provider_details=_details(choice.finish_reason, message.refusal),
            )
        )

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelStreamEvent]:
        """Deltas as the endpoint streams them, then the complete `ModelResponse`.

        Parts open where they first appear (the reasoning, the content or each of its `<think>`
        segments, each tool call by its index), so the message built equals the non-streamed
        one. Raises `StreamInterrupted` (with the partial message) when the stream ends without
        a finish reason, and `ProviderError` for an error inside it.
        """
        try:
            chunks = await self.client.chat.completions.create(
                **self.build_request(request), stream=True, stream_options={"include_usage": True}
            )
        except openai.OpenAIError as exc:
            raise self.map_error(exc) from exc
        builder = StreamBuilder(json_arguments=False)
        splitter = ThinkTagSplitter(self._tags) if self._tags is not None else None
        response = _ResponseFields(self.model_name)
        try:
            async with chunks:
                async for chunk in chunks:
                    delta = response.fold(chunk)
                    if delta is None:
                        continue  # the usage chunk, or one of Azure's filter chunks: no part
                    # (a delta's `role`, and the legacy `function_call` that `tool_calls`
                    # replaced, make no part either)
                    reasoning = _reasoning(delta.model_extra, self._fields)
                    if reasoning and (event := builder.thinking(_REASONING, reasoning)):
                        yield event
                    if delta.content:
                        for event in _content(builder, splitter, delta.content):
                            yield event
                    if delta.tool_calls and splitter is not None:  # the content is over
                        for event in _segments(builder, splitter.end()):
                            yield event
                    for call in delta.tool_calls or ():
                        if event := _tool_call(builder, call):
                            yield event
        except (openai.OpenAIError, *STREAM_BREAKS) as exc:  # a break, or an error event
            raise self._stream_error(exc, builder, response.model, "its finish_reason") from exc
        for event in _segments(builder, splitter.end()) if splitter is not None else ():
            yield event
        if response.finish is None:
            raise self._stream_error(None, builder, response.model, "its finish_reason")
        yield ModelResponse(response.message(builder, self.scope))

    def map_error(self, exc: BaseException) -> BaseException:
        """The `ProviderError` for an SDK exception (the service's message, status and type,
        credentials masked), with a hint for two refusals that have a known fix; anything else
        comes back as it is."""
        error = super().map_error(exc)
        if not isinstance(error, ProviderError) or not isinstance(exc, openai.OpenAIError):
            return error
        text = error.message.lower()
        effort = self.thinking is not None and self.thinking.effort is not None
        if error.status == 400 and effort and ("tool" in text or "function" in text):
            add_hint(
                error,
                "Hint: this model does not take tools together with reasoning_effort on Chat "
                "Completions: drop OpenAIThinking.effort, or use OpenAIResponsesModel.",
            )
        elif "reasoning_content" in text and self._dialect.replay == "never":
            add_hint(
                error,
                f"Hint: this endpoint wants reasoning_content back on assistant turns, which "
                f"dialect {self.scope!r} never sends: use dialect='deepseek' (or a "
                "ChatDialect with replay='tool_turns').",
            )
        return error

    @staticmethod
    def map_finish_reason(raw: str | None) -> FinishReason | None:
        """The normalised finish reason (None for values it does not know)."""
        return _FINISH.get(raw) if raw is not None else None


class _ResponseFields:
    """What a stream's chunks say about the response as a whole: its id, model, usage, finish
    reason and refusal."""

    __slots__ = ("finish", "id", "model", "refusal", "usage")

    def __init__(self, model: str) -> None:
        self.id: str | None = None
        self.model = model
        self.usage: CompletionUsage | None = None
        self.finish: str | None = None
        self.refusal: list[str] = []

    def fold(self, chunk: ChatCompletionChunk) -> ChoiceDelta | None:
        """Take a chunk's response fields; its first choice's delta, when it has one."""
        # Azure opens with a prompt-filter chunk (empty id and model, no choices) and may send
        # content-filter chunks without a delta: the id is the first non-empty one, the model
        # the last non-empty one, as in the non-streamed response.
        if self.id is None and chunk.id:
            self.id = chunk.id
        if chunk.model:
            self.model = chunk.model
        if chunk.usage is not None:
            self.usage = chunk.usage
        if not chunk.choices:
            return None
        choice = chunk.choices[0]
        if choice.finish_reason is not None:
            self.finish = choice.finish_reason
        delta = cast("ChoiceDelta | None", choice.delta)
        if delta is not None and delta.refusal:
            self.refusal.append(delta.refusal)
        return delta

    def message(self, builder: StreamBuilder, scope: str) -> Message:
        return builder.message(
            scope=scope,
            model=self.model,
            usage=_usage(self.usage),
            finish_reason=OpenAIChatModel.map_finish_reason(self.finish),
            id=self.id,
            provider_details=_details(self.finish, "".join(self.refusal) or None),
        )


def _content(
    builder: StreamBuilder, splitter: ThinkTagSplitter | None, text: str
) -> Sequence[ThinkingDelta | TextDelta]:
    """The deltas for a content fragment: one text part, or its `<think>` segments."""
    if splitter is not None:
        return _segments(builder, splitter.feed(text))
    delta = builder.text(_CONTENT, text)
    return (delta,) if delta is not None else ()


def _segments(builder: StreamBuilder, pieces: list[Segment]) -> list[ThinkingDelta | TextDelta]:
    """The deltas for split content, each `<think>` segment its own part."""
    deltas: list[ThinkingDelta | TextDelta] = []
    for number, thinking, text in pieces:
        key = (_SEGMENT, number)
        delta = builder.thinking(key, text) if thinking else builder.text(key, text)
        if delta is not None:
            deltas.append(delta)
    return deltas


def _tool_call(builder: StreamBuilder, call: ChoiceDeltaToolCall) -> ToolCallDelta | None:
    """Fold a tool-call fragment into the call its index names."""
    function = call.function
    if function is None:
        return builder.tool_call(call.index, id=call.id)
    return builder.tool_call(
        call.index, id=call.id, name=function.name, arguments=function.arguments or ""
    )


def _reasoning(extra: Mapping[str, Any] | None, fields: Sequence[str]) -> str | None:
    """The reasoning text in the first of the dialect's `fields` that has some."""
    if not extra:
        return None
    for name in fields:
        value = extra.get(name)
        if isinstance(value, str) and value:
            return value
    return None


def _client_from_environment(dialect: ChatDialect | None) -> openai.AsyncOpenAI:
    """A client from the environment: `AZURE_OPENAI_*`/`OPENAI_API_VERSION` for Azure,
    the dialect's key variable and base URL for a named endpoint, `OPENAI_*` otherwise."""
    if dialect is not None and dialect.name == "azure":
        return client_from_environment(openai.AsyncAzureOpenAI)
    if dialect is not None and (dialect.base_url or dialect.api_key_env):
        env = dialect.name.upper().replace("-", "_")
        base_url = os.environ.get(f"{env}_BASE_URL") or dialect.base_url
        if dialect.api_key_env:
            api_key = os.environ.get(dialect.api_key_env)
            if not api_key:
                raise ConfigurationError(
                    f"no API key for the {dialect.name} endpoint: set {dialect.api_key_env} "
                    "or pass client=openai.AsyncOpenAI(...)"
                )
        else:
            api_key = dialect.name  # local servers take any key
        return client_from_environment(
            lambda: openai.AsyncOpenAI(api_key=api_key, base_url=base_url)
        )
    return client_from_environment()


def _assistant(
    message: Message, with_reasoning: bool, field: str | None, tags: tuple[str, str] | None
) -> dict[str, Any] | None:
    """An assistant message on the wire: its text (with its reasoning inline between `tags`),
    its reasoning in `field`, its tool calls; None when it has nothing to send."""
    segments: list[tuple[bool, str]] = []
    reasoning: list[str] = []
    calls: list[dict[str, Any]] = []
    for part in message.parts:
        if isinstance(part, ThinkingBlock):
            # for_scope already removed other scopes' reasoning; a redacted payload has
            # no text to send in any dialect.
            if with_reasoning and part.text and part.redacted is None:
                if field is None:
                    segments.append((True, part.text))
                else:
                    reasoning.append(part.text)
        elif isinstance(part, TextPart):
            if part.text:
                segments.append((False, part.text))
        elif isinstance(part, ToolCall):
            calls.append(
                {
                    "id": part.id,
                    "type": "function",
                    "function": {"name": part.name, "arguments": arguments_json(part)},
                }
            )
    if tags is not None:
        content = join_think_tags(segments, tags)
    else:
        content = "".join(text for _, text in segments)
    if not content and not calls and not reasoning:
        return None
    wire: dict[str, Any] = {"role": "assistant", "content": content or None}
    if reasoning and field is not None:
        wire[field] = "\n\n".join(reasoning)
    if calls:
        wire["tool_calls"] = calls
    elif wire["content"] is None:
        wire["content"] = ""
    return wire


def _replayed(messages: Sequence[Message], rule: ReplayRule, scope: str) -> set[int]:
    """Indexes of this scope's assistant messages whose reasoning goes back under `rule`."""
    if rule == "never":
        return set()
    own = [
        i
        for i, m in enumerate(messages)
        if m.role == "assistant" and m.scope == scope and m.thinking
    ]
    if rule == "always" or not own:
        return set(own)
    # A user message with text starts a turn (on the wire it is a `user` message); one with
    # only tool results continues the turn.
    starts = [
        i
        for i, m in enumerate(messages)
        if m.role == "user" and any(isinstance(p, TextPart) and p.text for p in m.parts)
    ]
    if rule == "tool_loop":
        last = starts[-1] if starts else -1
        return {i for i in own if i > last}
    chosen: set[int] = set()
    bounds = [*starts, len(messages)]
    begin = -1
    for end in bounds:
        turn = range(begin + 1, end)
        if any(messages[i].role == "assistant" and messages[i].tool_calls for i in turn):
            chosen.update(i for i in own if begin < i < end)
        begin = end
    return chosen


def _named_tool_choice(name: str) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name}}


def _tool_message(result: ToolResult) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": result.call_id, "content": result.content_text()}


def _usage(usage: CompletionUsage | None) -> Usage:
    if usage is None:
        return Usage()
    completion = usage.completion_tokens_details
    prompt = usage.prompt_tokens_details
    return Usage(
        input_tokens=usage.prompt_tokens or 0,
        output_tokens=usage.completion_tokens or 0,
        thinking_tokens=(completion.reasoning_tokens or 0) if completion is not None else 0,
        cache_read_tokens=(prompt.cached_tokens or 0) if prompt is not None else 0,
    )


def _details(raw_finish: str | None, refusal: str | None) -> ProviderDetails | None:
    details: ProviderDetails = {}
    if raw_finish is not None:
        details["finish_reason"] = raw_finish
    if refusal:
        details["refusal"] = refusal
    return details or None
