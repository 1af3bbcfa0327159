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

from collections.abc import Mapping
from dataclasses import dataclass, field
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

MissingReasoning = Literal["omit", "empty"]
"""What an assistant tool-call message from another provider carries (its reasoning, if any, is
not this endpoint's and is dropped): `omit` sends no reasoning field; `empty` sends the field
empty (`"reasoning_content": ""`), the placeholder DeepSeek and Kimi accept where they otherwise
refuse a tool-call message without reasoning while thinking is on. This endpoint's own messages
never get it: one that lost its reasoning gets the service's refusal, not a silent gap."""

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
- `none`: no switch (the model thinks as it was served)."""

_SOURCES: tuple[str, ...] = get_args(ReasoningSource)
_RULES: tuple[str, ...] = get_args(ReplayRule)
_MISSING: tuple[str, ...] = get_args(MissingReasoning)
_SWITCHES: tuple[str, ...] = get_args(ThinkingSwitch)
_EFFORTS = frozenset({"none", "minimal", "low", "medium", "high", "xhigh", "max"})
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
    - `replay`: when it goes back (`ReplayRule`), in the shape it came (the same field, the
      `reasoning_details` array, `thinking` content chunks, or inline between `tags`).
    - `missing_reasoning`: what a tool-call message without reasoning of this scope carries
      (`MissingReasoning`).
    - `switch`: the request fields that turn reasoning on and off and set its level
      (`ThinkingSwitch`); `efforts` the `reasoning_effort` values the endpoint takes (None:
      OpenAI's, by model). `ModelSettings(thinking=...)` maps onto them.
    - `tags`: the opening and closing reasoning tags for `think_tags`.
    - `max_tokens_param`: the request field `max_tokens` settings go to.
    - `developer_role`: send instructions as a `developer` message to reasoning models
      (`o*`, `gpt-5*`), as OpenAI's own endpoints expect; `system` otherwise.
    - `stream_usage`: ask for usage in a stream (`stream_options`); off where the endpoint
      refuses the field and reports usage anyway.
    - `native_output`: the endpoint takes a JSON-schema `response_format` together with tools
      and reasoning (`ModelProfile.native_output`).
    - `media`: the images and documents it takes (`ModelProfile.media`).
    - `hosts`: base-URL hosts it is recognised by (a host or a parent domain).
    - `base_url`, `api_key_env`: where a client built from the environment points
      (`<NAME>_BASE_URL` overrides `base_url`).

    ```python
    ChatDialect("my-vllm", reasoning="reasoning", replay="tool_loop", switch="vllm")
    ```
    """

    name: str
    reasoning: ReasoningSource = "auto"
    replay: ReplayRule = "never"
    missing_reasoning: MissingReasoning = "omit"
    switch: ThinkingSwitch = "reasoning_effort"
    efforts: tuple[str, ...] | None = ("low", "medium", "high")
    tags: tuple[str, str] = DEFAULT_TAGS
    max_tokens_param: Literal["max_completion_tokens", "max_tokens"] = "max_tokens"
    developer_role: bool = False
    stream_usage: bool = True
    native_output: bool = False
    media: MediaSupport = field(default_factory=MediaSupport)
    hosts: tuple[str, ...] = ()
    base_url: str | None = None
    api_key_env: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():  # pyright: ignore[reportUnnecessaryIsInstance]
            raise ConfigurationError("a dialect needs a name (its provider scope)")
        _one_of("reasoning", self.reasoning, _SOURCES)
        _one_of("replay", self.replay, _RULES)
        _one_of("missing_reasoning", self.missing_reasoning, _MISSING)
        _one_of("switch", self.switch, _SWITCHES)
        if self.replay != "never" and self.reasoning in ("none", "auto"):
            raise ConfigurationError(
                f"dialect {self.name!r} replays reasoning but reasoning={self.reasoning!r} names "
                "no shape to send it in: use 'reasoning_content', 'reasoning', "
                "'reasoning_details', 'content_chunks' or 'think_tags'"
            )
        if self.missing_reasoning == "empty" and self.reasoning_field is None:
            raise ConfigurationError(
                f"dialect {self.name!r}: missing_reasoning='empty' sends an empty reasoning "
                "field, so reasoning must be 'reasoning_content', 'reasoning' or "
                "'reasoning_details'"
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

    @property
    def reasoning_field(self) -> str | None:
        """The message field reasoning text goes back in (None: another shape, or none);
        `reasoning_details` items go back in their own array."""
        return _FIELDS.get(self.reasoning)


def _one_of(name: str, value: object, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise ConfigurationError(
            f"dialect {name} must be one of {', '.join(map(repr, allowed))}, got {value!r}"
        )


DIALECTS: Mapping[str, ChatDialect] = {
    d.name: d
    for d in (
        ChatDialect(
            "openai",
            reasoning="none",
            efforts=None,
            max_tokens_param="max_completion_tokens",
            developer_role=True,
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
        # assistant tool-call message carries its reasoning_content.
        ChatDialect(
            "moonshot",
            reasoning="reasoning_content",
            replay="always",
            missing_reasoning="empty",
            switch="kimi",
            efforts=(),
            media=_VISION,
            hosts=("moonshot.ai", "moonshot.cn"),
            base_url="https://api.moonshot.ai/v1",
            api_key_env="MOONSHOT_API_KEY",
        ),
        # docs.z.ai/guides/capabilities/thinking-mode: interleaved thinking wants the reasoning
        # returned with the tool results; preserved thinking wants all of it, unmodified.
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
        # docs.x.ai/docs/guides/reasoning: grok-3-mini returns reasoning_content.
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
        # vLLM 0.16+ and SGLang: the `reasoning` field, read back on input (interleaved
        # thinking); the switch goes through the chat template.
        ChatDialect("vllm", reasoning="reasoning", replay="always", switch="vllm"),
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
        ChatDialect(
            "cerebras",
            reasoning="reasoning",
            switch="reasoning_format",
            max_tokens_param="max_completion_tokens",
            hosts=("cerebras.ai",),
            base_url="https://api.cerebras.ai/v1",
            api_key_env="CEREBRAS_API_KEY",
        ),
        ChatDialect(
            "together",
            reasoning="reasoning",
            switch="together",
            media=_VISION,
            hosts=("together.xyz", "together.ai"),
            base_url="https://api.together.xyz/v1",
            api_key_env="TOGETHER_API_KEY",
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
