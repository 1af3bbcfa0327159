"""`OpenAIChatModel`: reasoning models behind Chat Completions, through the official `openai` SDK.

```python
from thinkagent import Agent
from thinkagent.providers.openai import OpenAIChatModel

model = OpenAIChatModel("deepseek-reasoner", dialect="deepseek")   # DEEPSEEK_API_KEY
result = await Agent(model, tools=[get_weather]).run("What's the weather in Paris?")
```

One class serves OpenAI, Azure OpenAI and the OpenAI-compatible reasoning endpoints. What
differs between them is the *dialect* (`ChatDialect`): where the reasoning text comes back
(`reasoning_content`, `reasoning`, or inline `<think>...</think>` in the content) and when it
must be sent back. Reasoning captured this way carries no proof: it becomes a plain
`ThinkingBlock`, first in the message, tagged with the dialect's scope (`"deepseek"`...).
OpenAI's own endpoint returns no reasoning text (only its token count), and gets none back.
See `docs/providers/openai.md`.
"""

from __future__ import annotations

import os
import re
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, cast, get_args
from urllib.parse import urlsplit

import openai
from openai.types.chat import ChatCompletion, ChatCompletionChunk
from openai.types.chat.chat_completion_chunk import ChoiceDelta
from openai.types.completion_usage import CompletionUsage

from ..errors import ConfigurationError, ProviderError
from ..history import ForeignReasoning, for_scope
from ..messages import (
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
from ..stream import MessageAssembler, TextDelta, ThinkingDelta, ToolCallDelta
from ._common import (
    ModelInfo,
    arguments_json,
    check_foreign_reasoning,
    copy_settings,
    interrupted,
    merge_settings,
    request_options,
)
from ._openai import (
    STREAM_BREAKS,
    ReasoningEffort,
    add_hint,
    check_reasoning_effort,
    client_from_environment,
    client_secrets,
    provider_error,
    set_tool_choice,
    stream_error,
    user_items,
)
from ._openai_tags import (
    DEFAULT_TAGS,
    Segment,
    ThinkTagSplitter,
    join_think_tags,
    split_think_tags,
)
from .base import ModelRequest, ModelResponse, ModelSettings, ModelStreamEvent

__all__ = [
    "DIALECTS",
    "ChatDialect",
    "OpenAIChatModel",
    "ReasoningEffort",
    "ReasoningSource",
    "ReplayRule",
    "resolve_dialect",
]

ReasoningSource = Literal["none", "reasoning_content", "reasoning", "auto", "think_tags"]
"""Where a dialect's reasoning text comes back: no reasoning text (`none`), the
`reasoning_content` or `reasoning` field of the message, either of the two (`auto`), or inline
tags in the content (`think_tags`)."""

ReplayRule = Literal["never", "tool_loop", "tool_turns", "always"]
"""Which of this scope's assistant messages carry their reasoning back on later requests:
- `never`: none (capture-only);
- `tool_loop`: those after the last user prompt (the tool loop in progress);
- `tool_turns`: every assistant message of a turn in which the model called a tool, current or
  earlier (a turn runs from one user prompt to the next): DeepSeek's thinking-mode rule;
- `always`: every assistant message."""

_SOURCES: tuple[str, ...] = get_args(ReasoningSource)
_RULES: tuple[str, ...] = get_args(ReplayRule)
_REASONING_MODEL = re.compile(r"^(?:o\d|gpt-5|codex-)")


@dataclass(frozen=True, slots=True)
class ChatDialect:
    """How one Chat Completions endpoint returns reasoning, and when it wants it back.

    - `name`: the provider scope of the messages it produces (`"deepseek"`...).
    - `reasoning`: where the reasoning text comes from (`ReasoningSource`).
    - `replay`: when it goes back (`ReplayRule`), in the same field, or inline in the content
      between `tags` for `think_tags`.
    - `tags`: the opening and closing reasoning tags for `think_tags`.
    - `max_tokens_param`: the request field `max_tokens` settings go to.
    - `developer_role`: send instructions as a `developer` message to reasoning models
      (`o*`, `gpt-5*`), as OpenAI's own endpoints expect; `system` otherwise.
    - `base_url`, `api_key_env`: where a client built from the environment points
      (`<NAME>_BASE_URL` overrides `base_url`).

    ```python
    ChatDialect("my-vllm", reasoning="reasoning", replay="tool_loop")
    ```
    """

    name: str
    reasoning: ReasoningSource = "auto"
    replay: ReplayRule = "never"
    tags: tuple[str, str] = DEFAULT_TAGS
    max_tokens_param: Literal["max_completion_tokens", "max_tokens"] = "max_tokens"
    developer_role: bool = False
    base_url: str | None = None
    api_key_env: str | None = None

    def __post_init__(self) -> None:
        if not self.name:
            raise ConfigurationError("a dialect needs a name (its provider scope)")
        if self.reasoning not in _SOURCES:
            raise ConfigurationError(
                f"dialect reasoning must be one of {', '.join(map(repr, _SOURCES))}, "
                f"got {self.reasoning!r}"
            )
        if self.replay not in _RULES:
            raise ConfigurationError(
                f"dialect replay must be one of {', '.join(map(repr, _RULES))}, got {self.replay!r}"
            )
        if self.replay != "never" and self.reasoning in ("none", "auto"):
            raise ConfigurationError(
                f"dialect {self.name!r} replays reasoning but reasoning={self.reasoning!r} names "
                "no field to send it in: use 'reasoning_content', 'reasoning' or 'think_tags'"
            )
        if len(self.tags) != 2 or not all(self.tags):
            raise ConfigurationError("dialect tags must be two non-empty strings")
        if self.max_tokens_param not in ("max_completion_tokens", "max_tokens"):
            raise ConfigurationError(
                "max_tokens_param must be 'max_completion_tokens' or 'max_tokens'"
            )


DIALECTS: Mapping[str, ChatDialect] = {
    d.name: d
    for d in (
        ChatDialect(
            "openai",
            reasoning="none",
            max_tokens_param="max_completion_tokens",
            developer_role=True,
        ),
        ChatDialect(
            "azure",
            reasoning="none",
            max_tokens_param="max_completion_tokens",
            developer_role=True,
        ),
        ChatDialect(
            "deepseek",
            reasoning="reasoning_content",
            replay="tool_turns",
            base_url="https://api.deepseek.com",
            api_key_env="DEEPSEEK_API_KEY",
        ),
        ChatDialect(
            "qwen",
            reasoning="reasoning_content",
            base_url="https://dashscope-intl.aliyuncs.com/compatible-mode/v1",
            api_key_env="DASHSCOPE_API_KEY",
        ),
        ChatDialect("vllm", reasoning="auto"),
        ChatDialect(
            "moonshot",
            reasoning="reasoning_content",
            base_url="https://api.moonshot.ai/v1",
            api_key_env="MOONSHOT_API_KEY",
        ),
        ChatDialect(
            "openrouter",
            reasoning="reasoning",
            base_url="https://openrouter.ai/api/v1",
            api_key_env="OPENROUTER_API_KEY",
        ),
        ChatDialect("ollama", reasoning="reasoning", base_url="http://localhost:11434/v1"),
        ChatDialect(
            "groq",
            reasoning="reasoning",
            max_tokens_param="max_completion_tokens",
            base_url="https://api.groq.com/openai/v1",
            api_key_env="GROQ_API_KEY",
        ),
        ChatDialect("think_tags", reasoning="think_tags", replay="tool_turns"),
        ChatDialect(
            "minimax",
            reasoning="think_tags",
            replay="tool_turns",
            max_tokens_param="max_completion_tokens",
            base_url="https://api.minimax.io/v1",
            api_key_env="MINIMAX_API_KEY",
        ),
        ChatDialect("compatible", reasoning="auto"),
    )
}
"""The named dialects. `compatible` (capture `reasoning_content` or `reasoning`, send nothing
back) is the default for an endpoint that is not OpenAI's and not recognised by its host."""

_ALIASES: Mapping[str, str] = {"kimi": "moonshot"}

# Hosted endpoints recognised from the client's base URL when no dialect is given.
_HOSTS: tuple[tuple[str, str], ...] = (
    ("api.openai.com", "openai"),
    ("deepseek.com", "deepseek"),
    ("openrouter.ai", "openrouter"),
    ("groq.com", "groq"),
    ("moonshot.ai", "moonshot"),
    ("moonshot.cn", "moonshot"),
    ("dashscope.aliyuncs.com", "qwen"),
    ("dashscope-intl.aliyuncs.com", "qwen"),
    ("minimax.io", "minimax"),
    ("minimaxi.com", "minimax"),
)


def resolve_dialect(
    dialect: str | ChatDialect | None, client: openai.AsyncOpenAI | None = None
) -> ChatDialect:
    """The dialect for a name, an object, or (`None`) the client: Azure for an
    `AsyncAzureOpenAI`, else by the base URL's host (`openai` for api.openai.com, ...), else
    `compatible` (capture-only)."""
    if isinstance(dialect, ChatDialect):
        return dialect
    if dialect is not None:
        if not isinstance(dialect, str):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise ConfigurationError(
                f"dialect must be a name or a ChatDialect, got {type(dialect).__name__}"
            )
        found = DIALECTS.get(_ALIASES.get(dialect.lower(), dialect.lower()))
        if found is None:
            known = ", ".join(sorted({*DIALECTS, *_ALIASES}))
            raise ConfigurationError(
                f"unknown chat dialect {dialect!r}; known dialects: {known} (or pass a ChatDialect)"
            )
        return found
    if client is None:
        return DIALECTS["openai"]
    if isinstance(client, openai.AsyncAzureOpenAI):
        return DIALECTS["azure"]
    host = (urlsplit(str(client.base_url)).hostname or "").lower()
    for suffix, name in _HOSTS:
        if host == suffix or host.endswith("." + suffix):
            return DIALECTS[name]
    return DIALECTS["compatible"]


def _build_client(dialect: ChatDialect | None) -> openai.AsyncOpenAI:
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


_FINISH: Mapping[str, FinishReason] = {
    "stop": "stop",
    "tool_calls": "tool_call",
    "function_call": "tool_call",
    "length": "length",
    "content_filter": "content_filter",
}


def finish_reason(raw: str | None) -> FinishReason | None:
    """The normalised finish reason (None for values it does not know)."""
    return _FINISH.get(raw) if raw is not None else None


class OpenAIChatModel(ModelInfo[openai.AsyncOpenAI]):
    """A model behind Chat Completions (OpenAI, Azure OpenAI, or a compatible endpoint),
    through `openai.AsyncOpenAI` / `openai.AsyncAzureOpenAI`.

    - `client`: your client (its retries, timeouts and base URL apply); built from the
      environment when omitted (see `ChatDialect.base_url`).
    - `dialect`: a name from `DIALECTS` (`"deepseek"`, `"qwen"`, `"vllm"`, `"moonshot"`/`"kimi"`,
      `"openrouter"`, `"ollama"`, `"groq"`, `"think_tags"`, `"minimax"`, `"openai"`, `"azure"`,
      `"compatible"`) or a `ChatDialect`. Omitted: `azure` for an Azure client, else from the
      base URL's host, else `compatible` (reasoning captured, never sent back).
    - `reasoning_effort`: sent as `reasoning_effort` when set.
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
        reasoning_effort: ReasoningEffort | None = None,
        foreign_reasoning: ForeignReasoning = "drop",
        settings: ModelSettings | None = None,
        extra_body: Mapping[str, Any] | None = None,
        extra_headers: Mapping[str, str] | None = None,
    ) -> None:
        check_reasoning_effort(reasoning_effort)
        check_foreign_reasoning(foreign_reasoning)
        given = resolve_dialect(dialect) if dialect is not None else None
        self._client = client if client is not None else _build_client(given)
        self._dialect = given if given is not None else resolve_dialect(None, self._client)
        self._scope = self._dialect.name
        self._model_name = model_name
        self.reasoning_effort: ReasoningEffort | None = reasoning_effort
        self.foreign_reasoning: ForeignReasoning = foreign_reasoning
        self.settings: ModelSettings = settings or {}
        self.extra_body: dict[str, Any] = dict(extra_body or {})
        self.extra_headers: dict[str, str] = dict(extra_headers or {})
        self._secrets = client_secrets(self._client)
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

    # --- requests ---------------------------------------------------------------------------

    def build_request(self, request: ModelRequest) -> dict[str, Any]:
        """The keyword arguments for `client.chat.completions.create` (without `stream`).

        Raises `ConfigurationError` for a `tool_choice` naming no tool on offer.
        """
        settings = merge_settings(self.settings, request.settings)
        messages = self.build_messages(request.messages)
        if request.instructions:
            messages.insert(0, {"role": self._instructions_role, "content": request.instructions})
        params: dict[str, Any] = {"model": self._model_name, "messages": messages}
        if request.tools:
            tools: list[dict[str, Any]] = []
            for tool in request.tools:
                function: dict[str, Any] = {"name": tool.name, "parameters": tool.parameters}
                if tool.description:
                    function["description"] = tool.description
                tools.append({"type": "function", "function": function})
            params["tools"] = tools
            set_tool_choice(params, settings, request.tools, _named_tool_choice)
        if self.reasoning_effort is not None:
            params["reasoning_effort"] = self.reasoning_effort
        copy_settings(
            settings,
            params,
            max_tokens=self._dialect.max_tokens_param,
            temperature="temperature",
            top_p="top_p",
            stop_sequences="stop",
        )
        request_options(params, settings, self.extra_body, self.extra_headers)
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
            wire = self._assistant(message, i in replay, field)
            if wire is not None:
                out.append(wire)
        return out

    def _assistant(
        self, message: Message, with_reasoning: bool, field: str | None
    ) -> dict[str, Any] | None:
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
        if self._tags is not None:
            content = join_think_tags(segments, self._tags)
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

    async def request(self, request: ModelRequest) -> ModelResponse:
        params = self.build_request(request)
        try:
            completion = cast(
                "ChatCompletion", await self._client.chat.completions.create(**params)
            )
        except openai.OpenAIError as exc:
            raise self._error(exc, params) from exc
        return self.parse_response(completion)

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
        reasoning = self._reasoning(message.model_extra)
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
                model=completion.model or self._model_name,
                id=completion.id,
                usage=_usage(completion.usage),
                finish_reason=finish_reason(choice.finish_reason),
                provider_details=_details(choice.finish_reason, message.refusal),
            )
        )

    def _reasoning(self, extra: dict[str, Any] | None) -> str | None:
        if not extra:
            return None
        for name in self._fields:
            value = extra.get(name)
            if isinstance(value, str) and value:
                return value
        return None

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelStreamEvent]:
        """Deltas as the endpoint streams them, then the complete `ModelResponse`.

        Part indexes follow the order parts first appear (reasoning, then content, then tool
        calls, as the endpoints send them), so the assembled message equals the non-streamed
        one. Raises `StreamInterrupted` (with the partial message) when the stream ends
        without a finish reason, and `ProviderError` for an error inside the stream.
        """
        params = self.build_request(request)
        params["stream"] = True
        params["stream_options"] = {"include_usage": True}
        scope = self.scope
        try:
            chunks = cast(
                "openai.AsyncStream[ChatCompletionChunk]",
                await self._client.chat.completions.create(**params),
            )
        except openai.OpenAIError as exc:
            raise self._error(exc, params) from exc
        assembler = MessageAssembler(json_arguments=False)
        add = assembler.add
        fields = self._fields
        splitter = ThinkTagSplitter(self._tags) if self._tags is not None else None
        next_index = 0
        reasoning_index = -1
        text_index = -1
        segment_index: dict[int, int] = {}
        call_index: dict[int, int] = {}
        message_id: str | None = None
        model = self._model_name
        usage: CompletionUsage | None = None
        raw_finish: str | None = None
        refusal: list[str] = []

        def place(pieces: list[Segment]) -> list[ThinkingDelta | TextDelta]:
            """Deltas for split content, each segment at its own part index."""
            nonlocal next_index
            deltas: list[ThinkingDelta | TextDelta] = []
            for number, thinking, text in pieces:
                index = segment_index.get(number)
                if index is None:
                    index = segment_index[number] = next_index
                    next_index += 1
                piece = ThinkingDelta(index, text) if thinking else TextDelta(index, text)
                add(piece)
                deltas.append(piece)
            return deltas

        try:
            async with chunks:
                async for chunk in chunks:
                    # Azure opens with a prompt-filter chunk (empty id and model, no choices)
                    # and may send content-filter chunks without a delta: the id is the first
                    # non-empty one, the model the last non-empty one.
                    if message_id is None and chunk.id:
                        message_id = chunk.id
                    if chunk.model:
                        model = chunk.model
                    if chunk.usage is not None:
                        usage = chunk.usage
                    if not chunk.choices:
                        continue
                    choice = chunk.choices[0]
                    if choice.finish_reason is not None:
                        raw_finish = choice.finish_reason
                    delta = cast("ChoiceDelta | None", choice.delta)
                    if delta is None:
                        continue
                    extra = delta.model_extra
                    if extra and fields:
                        for name in fields:
                            reasoning = extra.get(name)
                            if reasoning and isinstance(reasoning, str):
                                if reasoning_index < 0:
                                    reasoning_index = next_index
                                    next_index += 1
                                thought = ThinkingDelta(reasoning_index, reasoning)
                                add(thought)
                                yield thought
                                break
                    content = delta.content
                    if content:
                        if splitter is None:
                            if text_index < 0:
                                text_index = next_index
                                next_index += 1
                            text = TextDelta(text_index, content)
                            add(text)
                            yield text
                        else:
                            for piece in place(splitter.feed(content)):
                                yield piece
                    if delta.tool_calls:
                        if splitter is not None and not call_index:
                            for piece in place(splitter.end()):  # the content is over
                                yield piece
                        for call in delta.tool_calls:
                            index = call_index.get(call.index)
                            if index is None:
                                index = call_index[call.index] = next_index
                                next_index += 1
                            function = call.function
                            if function is None:
                                tool = ToolCallDelta(index, id=call.id)
                            else:
                                tool = ToolCallDelta(
                                    index,
                                    id=call.id,
                                    name=function.name,
                                    args_fragment=function.arguments or "",
                                )
                            add(tool)
                            yield tool
                    if delta.refusal:
                        refusal.append(delta.refusal)
        except (openai.OpenAIError, *STREAM_BREAKS) as exc:  # a break, or an error event
            raise stream_error(
                exc,
                assembler,
                scope=scope,
                model=model,
                terminal="its finish_reason",
                error=lambda e: self._error(e, params),
            ) from exc
        if splitter is not None:
            for piece in place(splitter.end()):
                yield piece
        if raw_finish is None:
            raise interrupted(
                "the stream ended without a finish_reason", assembler, scope=scope, model=model
            )
        yield ModelResponse(
            assembler.message(
                scope=scope,
                model=model,
                usage=_usage(usage),
                finish_reason=finish_reason(raw_finish),
                id=message_id,
                provider_details=_details(raw_finish, "".join(refusal) or None),
            )
        )

    # --- errors -----------------------------------------------------------------------------

    def _error(self, exc: openai.OpenAIError, params: Mapping[str, Any]) -> ProviderError:
        error = provider_error(exc, scope=self.scope, secrets=self._secrets)
        text = error.message.lower()
        if (
            error.status == 400
            and "tools" in params
            and "reasoning_effort" in params
            and ("tool" in text or "function" in text)
        ):
            add_hint(
                error,
                "Hint: this model does not take tools together with reasoning_effort on Chat "
                "Completions: drop reasoning_effort, or use OpenAIResponsesModel.",
            )
        elif "reasoning_content" in text and self._dialect.replay == "never":
            add_hint(
                error,
                f"Hint: this endpoint wants reasoning_content back on assistant turns, which "
                f"dialect {self.scope!r} never sends: use dialect='deepseek' (or a "
                "ChatDialect with replay='tool_turns').",
            )
        return error


# --- translation helpers ---------------------------------------------------------------------


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
