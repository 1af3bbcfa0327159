"""Chat Completions dialects: where an endpoint returns reasoning, when it wants it back, and
which switches turn it on.

`DIALECTS` names the endpoints thinkagent knows; `ChatDialect` describes any other in a few
keyword arguments; `resolve_dialect` picks one from a name, or from the client (Azure, or the
base URL's host).

```python
ChatDialect("my-gateway", reasoning="reasoning", replay="tool_turns")
```
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal, cast, get_args
from urllib.parse import urlsplit

import openai

from ...errors import ConfigurationError
from ..base import MediaSupport
from ._tags import DEFAULT_TAGS

__all__ = [
    "DIALECTS",
    "DIALECT_HEADER",
    "ChatDialect",
    "MissingReasoning",
    "ReasoningSource",
    "ReplayRule",
    "ReplayShape",
    "ThinkingSwitch",
    "resolve_dialect",
]

ReasoningSource = Literal[
    "none",
    "reasoning_content",
    "reasoning",
    "auto",
    "think_tags",
    "reasoning_details",
    "content_chunks",
]
"""Where a dialect's reasoning comes back:
- `none`: nowhere (OpenAI's own endpoint returns only a token count);
- `reasoning_content` or `reasoning`: that field of the message, as text;
- `auto`: whichever of the two has text (capture only: it names no field to send back);
- `think_tags`: inline in the content, between the dialect's `tags`;
- `reasoning_details`: OpenRouter's typed `reasoning_details` items (signed text, summaries,
  encrypted payloads), one thinking block each, with the `reasoning` text when none came;
- `content_chunks`: Mistral's content list of `thinking` and `text` chunks."""

ReplayRule = Literal["never", "tool_loop", "tool_turns", "always"]
"""Which of this scope's assistant messages carry their reasoning back on later requests:
- `never`: none (capture-only);
- `tool_loop`: those after the last user prompt (the tool loop in progress);
- `tool_turns`: every assistant message of a turn in which the model called a tool, current or
  earlier (a turn runs from one user prompt to the next): DeepSeek's thinking-mode rule;
- `always`: every assistant message."""

ReplayShape = Literal["received", "think_tags"]
"""The shape reasoning goes back in: `received`, the one it came in (its field, its
`reasoning_details` items, its content chunks, or inline between tags); `think_tags`, inline at
the start of the content between the dialect's `tags` whatever it came in (GLM on Cerebras
returns it in a field but reads it back only from the content)."""

MissingReasoning = Literal["omit", "empty", "always_empty"]
"""What an assistant tool-call message without this scope's reasoning carries:
- `omit`: no reasoning field;
- `empty`: the field empty (`"reasoning_content": ""`) on another provider's messages (their
  reasoning, if any, is not this endpoint's and is dropped): the placeholder DeepSeek accepts
  where it otherwise refuses a tool-call message without reasoning while thinking is on. This
  endpoint's own messages never get it: one that lost its reasoning gets the service's refusal,
  not a silent gap;
- `always_empty`: the field empty on every such message, this endpoint's own too, with a
  `reasoning_placeholder` warning for its own (Kimi checks only that the field is there: turns
  that never had reasoning, or lost it, are sent so by its users' clients)."""

ThinkingSwitch = Literal[
    "reasoning_effort",
    "deepseek",
    "kimi",
    "zai",
    "openrouter",
    "together",
    "qwen",
    "ollama",
    "vllm",
    "reasoning_format",
    "minimax",
    "fireworks",
    "none",
]
"""How a dialect turns reasoning on and off and sets its level (see `docs/providers/openai.md`):
- `reasoning_effort`: the `reasoning_effort` field only (OpenAI, Azure, xAI, Mistral);
- `deepseek`: `thinking: {"type": "enabled"|"disabled"}` and `reasoning_effort`;
- `kimi`: `thinking: {"type": ...}` (with `keep: "all"` to preserve past reasoning), never
  together with `reasoning_effort`;
- `zai`: `thinking: {"type": ...}` (with `clear_thinking: false` to preserve past reasoning);
- `openrouter`: `reasoning: {"enabled", "effort", "max_tokens"}`;
- `together`: `reasoning: {"enabled"}` and `reasoning_effort`;
- `qwen`: `enable_thinking` and `thinking_budget` (DashScope);
- `ollama`: `think` (a bool, or a level);
- `vllm`: `chat_template_kwargs` (`enable_thinking` and `thinking`) and `reasoning_effort`;
- `reasoning_format`: `reasoning_format` (`parsed`, `raw`, `hidden`) and `reasoning_effort`
  (Groq, Cerebras);
- `minimax`: `reasoning_split` (the model always thinks);
- `fireworks`: `reasoning_effort` and `reasoning_history` (`interleaved` or `preserved`);
- `none`: no switch (the model thinks as it was served)."""

_SOURCES: tuple[str, ...] = get_args(ReasoningSource)
_RULES: tuple[str, ...] = get_args(ReplayRule)
_SHAPES: tuple[str, ...] = get_args(ReplayShape)
_MISSING: tuple[str, ...] = get_args(MissingReasoning)
_SWITCHES: tuple[str, ...] = get_args(ThinkingSwitch)
_EFFORTS = frozenset({"none", "minimal", "low", "medium", "high", "xhigh", "max", "default"})
_FIELDS: Mapping[str, str] = {
    "reasoning_content": "reasoning_content",
    "reasoning": "reasoning",
    "reasoning_details": "reasoning",
}

_IMAGES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
_MB = 1024 * 1024
_OPENAI_MEDIA = MediaSupport(_IMAGES | {"application/pdf"}, urls=True, max_bytes=20 * _MB)
"""OpenAI Chat Completions: PNG, JPEG, WEBP and non-animated GIF images by bytes or URL (20 MB
each), PDFs as `file` parts, no media in tool messages (text only); a PDF by URL is refused
there by the adapter (developers.openai.com/api/docs/guides/images-vision, .../file-inputs)."""
_VISION = MediaSupport(_IMAGES, urls=True, max_bytes=20 * _MB)
"""Hosts whose vision models take `image_url` parts (bytes as data URLs, or URLs)."""


@dataclass(frozen=True, slots=True)
class ChatDialect:
    """How one Chat Completions endpoint returns reasoning, when it wants it back, and how it
    is switched on: every field is checked when the dialect is built.

    - `name`: the provider scope of the messages it produces (`"deepseek"`...): reasoning
      goes back only to this scope.
    - `reasoning`: where the reasoning comes from (`ReasoningSource`).
    - `replay`: when it goes back (`ReplayRule`), in the shape `replay_as` says
      (`ReplayShape`: by default the one it came in: the same field, the `reasoning_details`
      array, `thinking` content chunks, or inline between `tags`).
    - `missing_reasoning`: what a tool-call message without reasoning of this scope carries
      (`MissingReasoning`).
    - `switch`: the request fields that turn reasoning on and off and set its level
      (`ThinkingSwitch`); `efforts` the `reasoning_effort` values the endpoint takes (None:
      OpenAI's, by model); `can_disable` False where the model always thinks (a request to
      turn it off is not sent, with a warning). `ModelSettings(thinking=...)` maps onto them.
    - `call_signatures`: tool calls carry a signature in
      `extra_content.google.thought_signature` (Gemini's OpenAI-compatible endpoint): kept on
      each `ToolCall` and sent back in place; another provider's tool-call message gets the
      documented `skip_thought_signature_validator` on its first call.
    - `tags`: the opening and closing reasoning tags for `think_tags`.
    - `max_tokens_param`: the request field `max_tokens` settings go to.
    - `developer_role`: send instructions as a `developer` message to reasoning models
      (`o*`, `gpt-5*`), as OpenAI's own endpoints expect; `system` otherwise.
    - `mid_conversation_system`: the endpoint takes a `system` (or `developer`) message
      after the first turn, where it stands: a `SystemNote` goes as one. Off (the default),
      a note goes as the user's text with a `system_note_as_text` warning: many hosts
      refuse a system message after the first (Mistral, chat templates that want it first),
      or move it to the front or keep only the last.
    - `stream_usage`: ask for usage in a stream (`stream_options`); off where the endpoint
      refuses the field and reports usage anyway.
    - `native_output`: the endpoint takes a JSON-schema `response_format` together with tools
      and reasoning (`ModelProfile.native_output`).
    - `media`: the images and documents it takes (`ModelProfile.media`).
    - `hosts`: base-URL hosts it is recognised by (a host or a parent domain).
    - `base_url`, `api_key_env`: where a client built from the environment points
      (`<NAME>_BASE_URL` overrides `base_url`).
    - `variants`: `(pattern, dialect)` pairs for hosts that serve several model families with
      different rules (Cerebras: GLM and gpt-oss): the first whose `fnmatch` pattern matches
      the lower-case model name is the dialect of that model (`for_model`). A variant keeps
      the host's name (its scope).

    ```python
    ChatDialect("my-vllm", reasoning="reasoning", replay="tool_loop", switch="vllm")
    ```
    """

    name: str
    reasoning: ReasoningSource = "auto"
    replay: ReplayRule = "never"
    replay_as: ReplayShape = "received"
    missing_reasoning: MissingReasoning = "omit"
    switch: ThinkingSwitch = "reasoning_effort"
    efforts: tuple[str, ...] | None = ("low", "medium", "high")
    can_disable: bool = True
    call_signatures: bool = False
    tags: tuple[str, str] = DEFAULT_TAGS
    max_tokens_param: Literal["max_completion_tokens", "max_tokens"] = "max_tokens"
    developer_role: bool = False
    mid_conversation_system: bool = False
    stream_usage: bool = True
    native_output: bool = False
    media: MediaSupport = field(default_factory=MediaSupport)
    hosts: tuple[str, ...] = ()
    base_url: str | None = None
    api_key_env: str | None = None
    variants: tuple[tuple[str, ChatDialect], ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():  # pyright: ignore[reportUnnecessaryIsInstance]
            raise ConfigurationError("a dialect needs a name (its provider scope)")
        _one_of("reasoning", self.reasoning, _SOURCES)
        _one_of("replay", self.replay, _RULES)
        _one_of("replay_as", self.replay_as, _SHAPES)
        _one_of("missing_reasoning", self.missing_reasoning, _MISSING)
        _one_of("switch", self.switch, _SWITCHES)
        if (
            self.replay != "never"
            and self.replay_as == "received"
            and self.reasoning in ("none", "auto")
        ):
            raise ConfigurationError(
                f"dialect {self.name!r} replays reasoning but reasoning={self.reasoning!r} names "
                "no shape to send it in: use 'reasoning_content', 'reasoning', "
                "'reasoning_details', 'content_chunks' or 'think_tags', or replay_as='think_tags'"
            )
        if self.missing_reasoning != "omit" and self.reasoning_field is None:
            raise ConfigurationError(
                f"dialect {self.name!r}: missing_reasoning={self.missing_reasoning!r} sends an "
                "empty reasoning field, so reasoning must be 'reasoning_content', 'reasoning' or "
                "'reasoning_details'"
            )
        for flag in ("can_disable", "call_signatures", "mid_conversation_system"):
            if not isinstance(getattr(self, flag), bool):
                raise ConfigurationError(f"dialect {flag} must be True or False")
        variants: object = self.variants
        if not isinstance(variants, tuple) or not all(  # pyright: ignore[reportUnnecessaryIsInstance]
            isinstance(v, tuple)
            and len(cast("tuple[object, ...]", v)) == 2
            and isinstance(cast("tuple[object, ...]", v)[0], str)
            and isinstance(cast("tuple[object, ...]", v)[1], ChatDialect)
            for v in cast("tuple[object, ...]", variants)
        ):
            raise ConfigurationError("dialect variants must be a tuple of (pattern, ChatDialect)")
        for pattern, variant in self.variants:
            if variant.name != self.name:
                raise ConfigurationError(
                    f"dialect {self.name!r}: variant {pattern!r} is named {variant.name!r}; a "
                    "variant keeps its host's name (its scope)"
                )
        if self.efforts is not None:
            unknown = [e for e in self.efforts if e not in _EFFORTS]
            if not isinstance(self.efforts, tuple) or unknown:  # pyright: ignore[reportUnnecessaryIsInstance]
                raise ConfigurationError(
                    f"dialect efforts must be a tuple of {', '.join(sorted(_EFFORTS))}; "
                    f"got {self.efforts!r}"
                )
        if len(self.tags) != 2 or not all(isinstance(t, str) and t for t in self.tags):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise ConfigurationError("dialect tags must be two non-empty strings")
        _one_of("max_tokens_param", self.max_tokens_param, ("max_completion_tokens", "max_tokens"))
        if not isinstance(self.media, MediaSupport):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise ConfigurationError("dialect media must be a MediaSupport")
        hosts: object = self.hosts
        if not isinstance(hosts, tuple) or not all(  # pyright: ignore[reportUnnecessaryIsInstance]
            isinstance(h, str) and h for h in cast("tuple[object, ...]", hosts)
        ):
            raise ConfigurationError("dialect hosts must be a tuple of host names")

    def for_model(self, model_name: str) -> ChatDialect:
        """The dialect of `model_name` on this host: the first variant whose pattern matches
        the lower-case name, else this dialect."""
        lower = model_name.lower()
        for pattern, variant in self.variants:
            if fnmatch.fnmatchcase(lower, pattern):
                return variant
        return self

    def variant(self, pattern: str, **changes: object) -> tuple[str, ChatDialect]:
        """A `(pattern, dialect)` pair for `variants`: this dialect with `changes` (and no
        variants of its own)."""
        return pattern, replace(self, variants=(), **changes)  # pyright: ignore[reportArgumentType]

    @property
    def reasoning_field(self) -> str | None:
        """The message field reasoning text goes back in (None: another shape, or none);
        `reasoning_details` items go back in their own array."""
        return _FIELDS.get(self.reasoning)


def _with_variants(base: ChatDialect, *variants: tuple[str, dict[str, object]]) -> ChatDialect:
    """`base` with a variant per `(pattern, changes)`."""
    return replace(base, variants=tuple(base.variant(p, **c) for p, c in variants))


def _one_of(name: str, value: object, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise ConfigurationError(
            f"dialect {name} must be one of {', '.join(map(repr, allowed))}, got {value!r}"
        )


# Only OpenAI's own endpoints are known to read a system message after the first turn where it
# stands (`mid_conversation_system`). Mistral refuses one ("Unexpected role 'system' after role
# 'assistant'", swarmauri/swarmauri-sdk#162); the Qwen, Llama and Gemma chat templates behind
# vLLM and llama.cpp do too ("System message must be at the beginning.",
# vllm-project/vllm#46976, ggml-org/llama.cpp#27367); DeepSeek moves every system message to
# the front (routatic/proxy#76); Gemini's OpenAI-compatible endpoint keeps only the last
# (olimorris/codecompanion.nvim#2530). Elsewhere nothing is documented, so a note goes as text.
DIALECTS: Mapping[str, ChatDialect] = {
    d.name: d
    for d in (
        # OpenAI processes the messages in order, a system or developer one wherever it
        # stands (openai-python `types/chat/chat_completion_developer_message_param.py`).
        ChatDialect(
            "openai",
            reasoning="none",
            efforts=None,
            max_tokens_param="max_completion_tokens",
            developer_role=True,
            mid_conversation_system=True,
            native_output=True,
            media=_OPENAI_MEDIA,
            hosts=("api.openai.com",),
        ),
        ChatDialect(
            "azure",
            reasoning="none",
            efforts=None,
            max_tokens_param="max_completion_tokens",
            developer_role=True,
            mid_conversation_system=True,
            native_output=True,
            media=_OPENAI_MEDIA,
        ),
        # api-docs.deepseek.com/guides/thinking_mode: reasoning_content must go back on every
        # assistant message of a turn with tool calls; effort low|high|max.
        ChatDialect(
            "deepseek",
            reasoning="reasoning_content",
            replay="tool_turns",
            missing_reasoning="empty",
            switch="deepseek",
            efforts=("low", "high", "max"),
            hosts=("deepseek.com",),
            base_url="https://api.deepseek.com",
            api_key_env="DEEPSEEK_API_KEY",
        ),
        # platform.moonshot.ai/docs/guide/use-kimi-k2-thinking-model: with thinking on, every
        # assistant tool-call message carries its reasoning_content (its check tests only that
        # the field is there: anomalyco/opencode#10996).
        ChatDialect(
            "moonshot",
            reasoning="reasoning_content",
            replay="always",
            missing_reasoning="always_empty",
            switch="kimi",
            efforts=(),
            media=_VISION,
            hosts=("moonshot.ai", "moonshot.cn"),
            base_url="https://api.moonshot.ai/v1",
            api_key_env="MOONSHOT_API_KEY",
        ),
        # docs.z.ai/guides/capabilities/thinking-mode: interleaved thinking wants the reasoning
        # returned with the tool results; preserved thinking wants all of it, unmodified
        # (`clear_thinking` inside the thinking object). GLM-5.2 and 5.3 take reasoning_effort
        # low, high, max; GLM-5.3 always thinks (pydantic-ai models/zai.py).
        _with_variants(
            ChatDialect(
                "zai",
                reasoning="reasoning_content",
                replay="always",
                switch="zai",
                efforts=(),
                media=_VISION,
                hosts=("z.ai", "bigmodel.cn"),
                base_url="https://api.z.ai/api/paas/v4",
                api_key_env="ZAI_API_KEY",
            ),
            ("glm-5.3*", {"efforts": ("low", "high", "max"), "can_disable": False}),
            ("glm-5.2*", {"efforts": ("low", "high", "max")}),
        ),
        # openrouter.ai/docs/use-cases/reasoning-tokens: pass reasoning_details back unmodified.
        ChatDialect(
            "openrouter",
            reasoning="reasoning_details",
            replay="always",
            switch="openrouter",
            efforts=("minimal", "low", "medium", "high", "xhigh"),
            media=_OPENAI_MEDIA,
            hosts=("openrouter.ai",),
            base_url="https://openrouter.ai/api/v1",
            api_key_env="OPENROUTER_API_KEY",
        ),
        # docs.mistral.ai/studio-api/conversations/reasoning: thinking chunks in the content.
        ChatDialect(
            "mistral",
            reasoning="content_chunks",
            replay="always",
            efforts=("none", "high"),
            stream_usage=False,
            media=_VISION,
            hosts=("mistral.ai",),
            base_url="https://api.mistral.ai/v1",
            api_key_env="MISTRAL_API_KEY",
        ),
        # docs.x.ai/docs/guides/reasoning: grok-3-mini returns reasoning_content (effort low or
        # high); grok-4.3 takes none to high, grok-4.5 low to high (always on), grok-4 none.
        _with_variants(
            ChatDialect(
                "xai",
                reasoning="reasoning_content",
                replay="always",
                efforts=("none", "low", "medium", "high"),
                media=_VISION,
                hosts=("x.ai",),
                base_url="https://api.x.ai/v1",
                api_key_env="XAI_API_KEY",
            ),
            ("grok-4.5*", {"efforts": ("low", "medium", "high")}),
            ("grok-4.3*", {"efforts": ("none", "low", "medium", "high")}),
            ("grok-3-mini*", {"efforts": ("low", "high")}),
            ("grok-4", {"efforts": ()}),
            ("grok-4-0709", {"efforts": ()}),
        ),
        # vLLM 0.16+ and SGLang: the `reasoning` field, read back on input (interleaved
        # thinking); the switch goes through the chat template.
        ChatDialect("vllm", reasoning="reasoning", replay="always", switch="vllm"),
        # console.groq.com/docs/reasoning: Qwen 3 takes reasoning_effort none or default
        # ("`reasoning_effort` must be one of `none` or `default`", earendil-works/pi#1745),
        # gpt-oss low to high.
        _with_variants(
            ChatDialect(
                "groq",
                reasoning="reasoning",
                switch="reasoning_format",
                max_tokens_param="max_completion_tokens",
                media=_VISION,
                hosts=("groq.com",),
                base_url="https://api.groq.com/openai/v1",
                api_key_env="GROQ_API_KEY",
            ),
            ("qwen/qwen3*", {"efforts": ("none", "default")}),
        ),
        # inference-docs.cerebras.ai/capabilities/reasoning: reasoning in the `reasoning` field
        # (parsed); gpt-oss may take it back there, GLM reads earlier reasoning only from the
        # content, as <think>...</think>.
        _with_variants(
            ChatDialect(
                "cerebras",
                reasoning="reasoning",
                switch="reasoning_format",
                max_tokens_param="max_completion_tokens",
                hosts=("cerebras.ai",),
                base_url="https://api.cerebras.ai/v1",
                api_key_env="CEREBRAS_API_KEY",
            ),
            ("*glm*", {"replay": "always", "replay_as": "think_tags"}),
            ("gpt-oss*", {"replay": "tool_loop"}),
        ),
        # docs.together.ai/docs/inference/chat/reasoning: `reasoning` on most models,
        # `reasoning_content` on GLM-5.3 (always thinks; effort low to max).
        _with_variants(
            ChatDialect(
                "together",
                reasoning="reasoning",
                switch="together",
                media=_VISION,
                hosts=("together.xyz", "together.ai"),
                base_url="https://api.together.xyz/v1",
                api_key_env="TOGETHER_API_KEY",
            ),
            (
                "zai-org/glm-5.3*",
                {
                    "reasoning": "reasoning_content",
                    "efforts": ("low", "medium", "high", "max"),
                    "can_disable": False,
                },
            ),
        ),
        # docs.fireworks.ai/guides/reasoning: `reasoning_content`; reasoning_history decides
        # which earlier reasoning the model sees (docs.fireworks.ai/fine-tuning/thinking-history),
        # so all of it goes back.
        ChatDialect(
            "fireworks",
            reasoning="reasoning_content",
            replay="always",
            switch="fireworks",
            media=_VISION,
            hosts=("fireworks.ai",),
            base_url="https://api.fireworks.ai/inference/v1",
            api_key_env="FIREWORKS_API_KEY",
        ),
        # ai.google.dev/gemini-api/docs/openai: thought signatures ride on the tool calls in
        # extra_content.google.thought_signature and are checked like the native API's
        # (continuedev/continue#8865); thoughts, when asked for, come inline as <thought> tags.
        ChatDialect(
            "gemini-openai",
            reasoning="think_tags",
            efforts=("minimal", "low", "medium", "high"),
            tags=("<thought>", "</thought>"),
            call_signatures=True,
            media=_VISION,
            hosts=("generativelanguage.googleapis.com",),
            base_url="https://generativelanguage.googleapis.com/v1beta/openai/",
            api_key_env="GEMINI_API_KEY",
        ),
        ChatDialect(
            "ollama",
            reasoning="reasoning",
            switch="ollama",
            media=_VISION,
            base_url="http://localhost:11434/v1",
        ),
        ChatDialect(
            "qwen",
            reasoning="reasoning_content",
            switch="qwen",
            efforts=(),
            media=_VISION,
            hosts=("dashscope.aliyuncs.com", "dashscope-intl.aliyuncs.com"),
            base_url="https://dashscope-intl.aliyuncs.com/compatible-mode/v1",
            api_key_env="DASHSCOPE_API_KEY",
        ),
        # platform.minimax.io/docs/api-reference/text-openai-api: keep <think> in the content.
        ChatDialect(
            "minimax",
            reasoning="think_tags",
            replay="always",
            switch="minimax",
            efforts=(),
            max_tokens_param="max_completion_tokens",
            hosts=("minimax.io", "minimaxi.com"),
            base_url="https://api.minimax.io/v1",
            api_key_env="MINIMAX_API_KEY",
        ),
        ChatDialect("think_tags", reasoning="think_tags", replay="tool_turns", switch="none"),
        ChatDialect("compatible", reasoning="auto", switch="reasoning_effort"),
    )
}
"""The named dialects. `compatible` (capture `reasoning_content` or `reasoning`, send nothing
back, only `reasoning_effort` as a switch) is the default for an endpoint that is not OpenAI's
and not recognised by its host."""

_ALIASES: Mapping[str, str] = {
    "kimi": "moonshot",
    "glm": "zai",
    "zhipu": "zai",
    "sglang": "vllm",
    "dashscope": "qwen",
    "grok": "xai",
    "magistral": "mistral",
    "gemini": "gemini-openai",
}


DIALECT_HEADER = "x-thinkagent-dialect"
"""A client's default header naming the dialect of the endpoint it points at, for a host that
cannot be recognised by its name: the emulator's OpenAI client declares `openai`, as a local
proxy for a known host may."""


def resolve_dialect(
    dialect: str | ChatDialect | None, client: openai.AsyncOpenAI | None = None
) -> ChatDialect:
    """The dialect for a name, an object, or (`None`) the client: Azure for an
    `AsyncAzureOpenAI`, else the one its `x-thinkagent-dialect` default header declares, else by
    the base URL's host (`openai` for api.openai.com, ...), else `compatible` (capture-only)."""
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
    headers: Any = getattr(client, "default_headers", None)  # a stand-in client may have none
    declared = (
        cast("Mapping[str, object]", headers).get(DIALECT_HEADER)
        if isinstance(headers, Mapping)
        else None
    )
    if isinstance(declared, str) and declared:
        return resolve_dialect(declared)
    host = (urlsplit(str(client.base_url)).hostname or "").lower()
    for candidate in DIALECTS.values():
        if any(host == h or host.endswith("." + h) for h in candidate.hosts):
            return candidate
    return DIALECTS["compatible"]
