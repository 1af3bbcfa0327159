"""The model port: what the agent asks of a model, whatever the provider behind it."""

from __future__ import annotations

import fnmatch
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypedDict, get_args, runtime_checkable

from ..builtin_tools import BuiltinTool
from ..errors import ConfigurationError
from ..messages import Document, FinishReason, Image, Message, ToolResult, Usage
from ..stream import ModelDelta, PartEnd, WarningEvent

__all__ = [
    "THINKING_LEVELS",
    "MediaSupport",
    "Model",
    "ModelProfile",
    "ModelRequest",
    "ModelResponse",
    "ModelSettings",
    "ModelStreamEvent",
    "OutputMode",
    "OutputSpec",
    "PromptCacheTTL",
    "Thinking",
    "ThinkingLevel",
    "ToolChoice",
    "ToolDefinition",
    "check_builtin_tools",
    "check_thinking",
    "clamp_thinking",
    "model_profile",
]

ToolChoice = Literal["auto", "none", "required"] | str
"""`auto`, `none`, `required` (some tool), or the name of the one tool the model must call."""


ThinkingLevel = Literal["low", "medium", "high", "max"]
"""How hard the model should think, from least to most."""

Thinking = bool | ThinkingLevel
"""The one thinking knob: off, on at the model's default, or a level."""

THINKING_LEVELS: tuple[ThinkingLevel, ...] = get_args(ThinkingLevel)
"""The levels in increasing order: what `clamp_thinking` moves along."""


class ModelSettings(TypedDict, total=False):
    """Per-request settings every adapter understands.

    `thinking` is the one knob that works on every adapter: `False` (off where the model can
    turn it off), `True` (on, at the model's default), or a level `"low"`, `"medium"`,
    `"high"`, `"max"`. Each adapter maps it onto its vendor's own knob (an effort, a level, a
    token budget) and, when set, it takes precedence over the model's `thinking=` config for
    that request. A value the model cannot honour exactly is clamped to the nearest it can, with
    a `WarningEvent` saying so (`clamp_thinking`); thinking that cannot be turned off stays on,
    with a warning too.

    `prompt_cache` governs prompt caching where the provider needs the request to ask for it
    (cache breakpoints on Anthropic and Bedrock): on by default where it is safe, `False` turns
    it off, `"5m"` or `"1h"` picks the lifetime. Providers that cache prefixes by themselves
    (OpenAI, Gemini, compatible hosts) need nothing but a byte-stable prefix, which every adapter
    keeps; `prompt_cache_key` is passed as their cache routing key where they have one.
    """

    max_tokens: int
    temperature: float
    top_p: float
    stop_sequences: list[str]
    tool_choice: ToolChoice
    parallel_tool_calls: bool
    timeout: float
    extra_headers: dict[str, str]
    extra_body: dict[str, Any]
    thinking: Thinking
    prompt_cache: bool | PromptCacheTTL
    prompt_cache_key: str


PromptCacheTTL = Literal["5m", "1h"]
"""How long a cached prefix lives where the provider lets you choose (Anthropic, Bedrock)."""


def check_thinking(value: object) -> Thinking:
    """`value` as a `Thinking` setting; `ConfigurationError` when it is not one."""
    if isinstance(value, bool) or value in THINKING_LEVELS:
        return value  # pyright: ignore[reportReturnType]
    levels = ", ".join(repr(level) for level in THINKING_LEVELS)
    raise ConfigurationError(f"thinking must be False, True or one of {levels}; got {value!r}")


def clamp_thinking(
    value: ThinkingLevel, supported: Sequence[ThinkingLevel], *, scope: str, model: str
) -> tuple[ThinkingLevel, WarningEvent | None]:
    """The level an adapter sends for `value`, given the levels its model `supported` takes.

    A supported level is used as it is. Otherwise the nearest supported level is used, the
    higher one on a tie (asking for more thinking than a model has is answered with its most),
    together with the `thinking_clamped` warning the adapter returns with the response
    (`ModelResponse.warnings`) and yields from its stream.
    """
    if not supported:
        raise ConfigurationError(f"{model} takes no thinking level")
    if value in supported:
        return value, None
    rank = THINKING_LEVELS.index(value)
    chosen = min(
        supported,
        key=lambda level: (abs(THINKING_LEVELS.index(level) - rank), -THINKING_LEVELS.index(level)),
    )
    warning = WarningEvent(
        code="thinking_clamped",
        message=f"{model} has no thinking level {value!r}; {chosen!r} was used instead",
        scope=scope,
    )
    return chosen, warning


@dataclass(frozen=True, slots=True)
class ToolDefinition:
    """A tool as the model sees it: name, description and a JSON schema for its arguments."""

    name: str
    description: str
    parameters: dict[str, Any]


OutputMode = Literal["native", "tool"]
"""How a run asks for structured output: the provider's JSON-schema response format, or a tool
the model calls with its answer."""


@dataclass(frozen=True, slots=True)
class OutputSpec:
    """The shape the run's final answer must have (`ModelRequest.output`).

    `schema` is always a JSON schema of an object (a non-object output type is wrapped in
    `{"response": ...}`; the agent unwraps it), `name` and `description` name it.

    - `mode="native"`: the adapter sends `schema` as its vendor's JSON-schema response format
      (with `name`, and strict where the vendor has it), together with the tools and thinking
      of the request; the model's final answer is the JSON text. The agent only asks for it from
      a model whose `ModelProfile.native_output` is true.
    - `mode="tool"`: the agent has already added a tool named `name` with `schema` as its
      parameters to `ModelRequest.tools` and told the model in the instructions to call it. The
      adapter does nothing more: it must not force that tool (Claude refuses a forced tool choice
      while thinking), so it may simply ignore `output`.
    """

    name: str
    description: str
    schema: dict[str, Any]
    mode: OutputMode


@dataclass(frozen=True, slots=True)
class ModelRequest:
    """One request to a model: the conversation so far, the tools on offer, the settings.

    `messages` is never empty, except for a run started from instructions alone
    (`agent.run()` with no prompt): then the conversation may be empty or open with the model's
    message, and an adapter whose API needs a leading user turn adds one to what it sends.
    `output` is the structured output asked for (None: plain text). `builtin_tools` are the
    provider's own tools to declare beside `tools` (`WebSearch`...): an adapter declares each in
    its native shape, or raises `ConfigurationError` for one its provider or model lacks.
    """

    messages: Sequence[Message]
    tools: Sequence[ToolDefinition] = ()
    instructions: str | None = None
    settings: ModelSettings = field(default_factory=lambda: ModelSettings())
    output: OutputSpec | None = None
    builtin_tools: Sequence[BuiltinTool] = ()


@dataclass(frozen=True, slots=True)
class ModelResponse:
    """One complete model response: a single assistant message with its usage and finish reason.

    `warnings` are what the adapter adjusted to send the request (a clamped thinking level...);
    a streamed response yields the same warnings as events before its deltas.
    """

    message: Message
    warnings: tuple[WarningEvent, ...] = ()

    @property
    def usage(self) -> Usage:
        return self.message.usage or Usage()

    @property
    def finish_reason(self) -> FinishReason | None:
        return self.message.finish_reason


ModelStreamEvent = ModelDelta | PartEnd | WarningEvent | ModelResponse
"""What `Model.stream` yields: warnings, deltas and the end of each part, then exactly one
`ModelResponse`, last."""


@dataclass(frozen=True, slots=True)
class MediaSupport:
    """Which images and documents a model's endpoint takes, checked before anything is sent.

    `types` are media type patterns (`"image/png"`, `"image/*"`, `"application/pdf"`, `"*/*"`);
    `urls` says whether media may be given by URL (else only as bytes); `max_bytes` bounds the
    bytes of one part; `in_tool_results` says whether a tool result may carry media. The
    default takes nothing: a model that does not declare media gets a `ConfigurationError`
    before the request, instead of a part its adapter would drop or fail on.
    """

    types: frozenset[str] = frozenset()
    urls: bool = False
    max_bytes: int | None = None
    in_tool_results: bool = False

    @classmethod
    def everything(cls) -> MediaSupport:
        """Any media type, by bytes or URL, of any size, also in tool results (test models)."""
        return cls(frozenset({"*/*"}), urls=True, in_tool_results=True)

    def accepts(self, media_type: str) -> bool:
        return any(fnmatch.fnmatchcase(media_type, pattern) for pattern in self.types)

    def problem(self, part: Image | Document) -> str | None:
        """Why this endpoint cannot take `part`, or None."""
        if not self.types:
            return f"this model takes no {part.kind}s"
        if part.url is not None and not self.urls:
            return f"this model takes no {part.kind} by URL (give the bytes instead)"
        if part.media_type is not None and not self.accepts(part.media_type):
            return f"this model takes no {part.kind} of type {part.media_type!r}"
        size = len(part.data) if part.data is not None else 0
        if self.max_bytes is not None and size > self.max_bytes:
            return f"the {part.kind} has {size} bytes, over this model's limit of {self.max_bytes}"
        return None

    def check(
        self, messages: Sequence[Message], *, start: int = 0, stop: int | None = None
    ) -> None:
        """Raise `ConfigurationError` naming the first image or document of
        `messages[start:stop]` this endpoint cannot take (adapters call it before sending; the
        agent calls it with the model's profile on every message that enters a run)."""
        for i in range(start, len(messages) if stop is None else stop):
            for j, part in enumerate(messages[i].parts):
                if isinstance(part, _MEDIA):
                    problem = self.problem(part)
                elif isinstance(part, ToolResult) and part.media:
                    if not self.in_tool_results:
                        problem = "this model takes no media in tool results"
                    else:
                        problem = next(filter(None, map(self.problem, part.media)), None)
                else:
                    continue
                if problem is not None:
                    raise ConfigurationError(f"messages[{i}].parts[{j}]: {problem}")


_MEDIA = (Image, Document)


@dataclass(frozen=True, slots=True)
class ModelProfile:
    """What a model can do beyond the `Model` protocol, read by the agent before it asks.

    A model declares it as a `profile` attribute; a model without one gets this default, so
    models written before it keep working. `native_output`: the adapter honours
    `OutputSpec(mode="native")` together with thinking and tools. `media`: the images and
    documents it takes. `reasoning`: the model reasons at all (False for Claude 3.5 Haiku,
    GPT-4.1, Gemini 2.0...): the agent then sends no `thinking` setting, with a warning when
    one asked for thinking.
    """

    native_output: bool = False
    media: MediaSupport = field(default_factory=MediaSupport)
    reasoning: bool = True


_DEFAULT_PROFILE = ModelProfile()


def check_builtin_tools(model: object, tools: Sequence[BuiltinTool]) -> None:
    """Raise `ConfigurationError` naming the first of `tools` that `model` cannot declare.

    A model that takes built-in tools has a `check_builtin_tools(tools)` method of its own
    (each adapter, by its provider's and its model's rules); any other model takes none. Two
    configs of one kind are refused too (two `MCPServer`s only when they share a name)."""
    if not tools:
        return
    seen: set[tuple[str, str]] = set()
    for tool in tools:
        if not isinstance(tool, BuiltinTool):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise ConfigurationError(f"{tool!r} is not a built-in tool config (such as WebSearch)")
        key = (tool.kind, getattr(tool, "name", "") if tool.kind == "mcp" else "")
        if key in seen:
            raise ConfigurationError(f"{tool.label} is given twice: give each built-in tool once")
        seen.add(key)
    check = getattr(model, "check_builtin_tools", None)
    if not callable(check):
        raise ConfigurationError(
            f"{tools[0].label} is not available on {type(model).__name__}: it takes no built-in "
            "tools"
        )
    check(tools)


def model_profile(model: object) -> ModelProfile:
    """`model.profile` when it is a `ModelProfile`, else the default (nothing declared)."""
    profile = getattr(model, "profile", None)
    return profile if isinstance(profile, ModelProfile) else _DEFAULT_PROFILE


@runtime_checkable
class Model(Protocol):
    """A reasoning model behind one wire API.

    `stream` yields deltas as they arrive and ends with the same `ModelResponse` that `request`
    returns for the same response; a stream cut short raises `StreamInterrupted` instead.
    """

    @property
    def model_name(self) -> str: ...

    @property
    def scope(self) -> str:
        """The replay identity of this model's messages: their proofs go back only here."""
        ...

    async def request(self, request: ModelRequest) -> ModelResponse: ...

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelStreamEvent]: ...
