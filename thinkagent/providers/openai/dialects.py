"""Chat Completions dialects: where an endpoint returns reasoning and when it wants it back.

`DIALECTS` names the endpoints thinkagent knows; `ChatDialect` describes any other;
`resolve_dialect` picks one from a name, or from the client (Azure, or the base URL's host).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, get_args
from urllib.parse import urlsplit

import openai

from ...errors import ConfigurationError
from ._tags import DEFAULT_TAGS

__all__ = ["DIALECTS", "ChatDialect", "ReasoningSource", "ReplayRule", "resolve_dialect"]

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
