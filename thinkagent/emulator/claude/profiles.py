"""What the emulator knows of each Claude model, by name: the thinking types it accepts (and the
400 for the others), its defaults, whether it keeps earlier turns' thinking, whether it runs
preserved thinking's prefix check, whose thinking it can read, and what else it refuses.

From Anthropic's documentation (platform.claude.com/docs/en/build-with-claude/thinking,
…/thinking-troubleshooting, …/preserved-thinking, each model's "what's new" page) as collected
in the project's provider rules. Names (``claude-opus-5-5``, ``claude-fable-5-2``,
``claude-mythos-preview``, ``claude-sonnet-4-5-20250929``, ``claude-3-7-sonnet-20250219``...)
are read as a family and a version.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

__all__ = ["ClaudeProfile", "claude_profile"]

_MODEL_RE = re.compile(
    r"^claude-(?:(?P<family>opus|sonnet|haiku|fable|mythos)-(?P<major>\d+)(?:-(?P<minor>\d{1,2}))?"
    r"(?=-|$)|(?P<omajor>\d)(?:-(?P<ominor>\d))?-(?P<ofamily>opus|sonnet|haiku)"
    r"|(?P<preview>mythos-preview))"
)

_SUGGEST_ADAPTIVE = (
    'Use "thinking.type.adaptive" and "output_config.effort" to control thinking behavior.'
)
_REFUSALS = {
    "enabled": f'"thinking.type.enabled" is not supported for this model. {_SUGGEST_ADAPTIVE}',
    "disabled": f'"thinking.type.disabled" is not supported for this model. {_SUGGEST_ADAPTIVE}',
    "adaptive": "adaptive thinking is not supported on this model",
    # The emulator's words: Anthropic documents these refusals without their text.
    "between_tools": '"thinking.type.between_tools" is not supported for this model.',
}
_PREVIEW_DISABLED = (
    '"thinking.type.disabled" is not supported for this model. Thinking defaults to adaptive mode '
    'when not specified; use "thinking.type.enabled" with "budget_tokens" for extended thinking.'
)
_SONNET_5_5_DISABLED = (
    '"thinking.type.disabled" is not supported for this model. Use "thinking.type.between_tools" '
    "to turn off up-front thinking."
)

Kind = Literal["adaptive", "enabled", "disabled", "between_tools"]


@dataclass(frozen=True)
class ClaudeProfile:
    """One Claude model: ``family`` (``opus``, ``sonnet``, ``haiku``, ``fable``, ``mythos``,
    ``mythos-preview``, or ``claude`` for a name it cannot read) and ``version``."""

    name: str
    family: str = "claude"
    version: tuple[int, int] = (0, 0)

    @property
    def key(self) -> str:
        """The model as a thinking block records it (``opus-5-5``)."""
        return f"{self.family}-{self.version[0]}-{self.version[1]}"

    def _at_least(self, family: str, version: tuple[int, int]) -> bool:
        return self.family == family and self.version >= version

    def _is(self, family: str, version: tuple[int, int]) -> bool:
        return self.family == family and self.version == version

    @property
    def _legacy(self) -> bool:
        """Claude 4.5 and earlier: thinking only with a budget."""
        return self.family in ("opus", "sonnet", "haiku") and self.version < (4, 6)

    @property
    def _always_on(self) -> bool:
        """Fable and Mythos 5.x and Opus 5.5: adaptive thinking only, never off."""
        return (self.family in ("fable", "mythos") and self.version >= (5, 0)) or self._at_least(
            "opus", (5, 5)
        )

    def refusal(self, kind: Kind) -> str | None:
        """The 400 for thinking ``kind`` on this model, or None when it accepts it."""
        if self.family == "claude":
            return None
        if kind == "between_tools":
            return None if self._at_least("sonnet", (5, 5)) else _REFUSALS[kind]
        if kind == "adaptive":
            return _REFUSALS[kind] if self._legacy else None
        if kind == "enabled":
            accepted = (
                self._legacy
                or self.family == "mythos-preview"
                or self._is("opus", (4, 6))
                or self._is("sonnet", (4, 6))
            )
            return None if accepted else _REFUSALS[kind]
        if self.family == "mythos-preview":
            return _PREVIEW_DISABLED
        if self._at_least("sonnet", (5, 5)):
            return _SONNET_5_5_DISABLED
        return _REFUSALS[kind] if self._always_on else None

    @property
    def reasons(self) -> bool:
        """Whether the model thinks at all: Claude 3.7 Sonnet and every model since (the
        thinking guide's list of supported models); Claude 3.5 and earlier answer a thinking
        request with ``'<model>' does not support thinking.`` (the text reported in
        anthropics/claude-code#11388 and #12914)."""
        if self.family not in ("opus", "sonnet", "haiku"):
            return True
        return self.version >= (4, 0) or self._is("sonnet", (3, 7))

    @property
    def thinks_by_default(self) -> bool:
        """Thinking (adaptive) when the request has no ``thinking``."""
        if self.family in ("fable", "mythos", "mythos-preview"):
            return True
        return (
            self._at_least("opus", (5, 0))
            or self._at_least("sonnet", (5, 0))
            or self._at_least("haiku", (5, 5))
        )

    @property
    def default_display(self) -> Literal["summarized", "omitted"]:
        """``omitted`` on Opus 4.7 and newer and every 5.x model, ``summarized`` before."""
        if self.family in ("fable", "mythos", "mythos-preview"):
            return "omitted"
        newer = (
            self._at_least("opus", (4, 7))
            or self._at_least("sonnet", (5, 0))
            or self._at_least("haiku", (5, 5))
        )
        return "omitted" if newer else "summarized"

    @property
    def keeps_earlier_thinking(self) -> bool:
        """Whether thinking from earlier turns stays in context (and is verified): Opus 4.5+,
        Sonnet 4.6+, Haiku 5.5, Fable, Mythos; earlier models strip it."""
        if self.family in ("fable", "mythos", "mythos-preview", "claude"):
            return self.family != "claude"
        return (
            self._at_least("opus", (4, 5))
            or self._at_least("sonnet", (4, 6))
            or self._at_least("haiku", (5, 5))
        )

    @property
    def checks_prefix(self) -> bool:
        """Whether the model runs (and records) preserved thinking's prefix check."""
        if self.family in ("fable", "mythos"):
            return self.version >= (5, 1)
        return self.family in ("opus", "sonnet", "haiku") and self.version >= (5, 5)

    @property
    def takes_system_messages(self) -> bool:
        """Whether ``role: "system"`` entries of ``messages`` are accepted: Opus 4.8 and newer,
        Sonnet and Haiku 5.5, Fable and Mythos 5 and newer; not Sonnet 5 nor older models
        (platform.claude.com/docs/en/build-with-claude/mid-conversation-system-messages)."""
        if self.family == "claude":
            return True  # a name the emulator cannot read: the request decides
        if self.family in ("fable", "mythos"):
            return self.version >= (5, 0)
        if self.family == "opus":
            return self.version >= (4, 8)
        return self.family in ("sonnet", "haiku") and self.version >= (5, 5)

    @property
    def account_bound(self) -> bool:
        """Whether this model's thinking is valid only in the account that produced it."""
        return self._is("sonnet", (5, 5)) or self._is("haiku", (5, 5))

    @property
    def refuses_forced_tools(self) -> bool:
        """Whether ``tool_choice`` ``any``/``tool`` is refused on every request."""
        return (
            self._is("opus", (5, 5))
            or self._is("fable", (5, 1))
            or self._is("mythos", (5, 1))
            or self._is("sonnet", (5, 5))
        )

    @property
    def cache_minimum(self) -> int:
        """The shortest prefix (tokens) prompt caching caches: 512 on Opus, Fable and Mythos
        5.x; 4,096 on Opus 4.5 to 4.7 and Haiku 4.5 (and, not confirmed, Haiku 5.5); 2,048 on
        Haiku 3 and 3.5; 1,024 on the others (Sonnet, Opus 4.8, Opus 4 and 4.1)
        (platform.claude.com/docs/en/build-with-claude/prompt-caching; Opus 4.7 is listed at
        2,048 by some sources, 4,096 by Bedrock's)."""
        if self.family in ("fable", "mythos") or self._at_least("opus", (5, 0)):
            return 512
        if self.family == "opus" and (4, 5) <= self.version <= (4, 7):
            return 4096
        if self.family == "haiku":
            return 2048 if self.version < (4, 0) else 4096
        return 1024

    def reads(self, producer: str, *, claude_api: bool) -> bool:
        """Whether this model can read thinking recorded as ``producer`` (a ``key``)."""
        if producer in (self.key, "haiku-5-5", ""):
            return True
        if self._is("haiku", (5, 5)):
            return False
        latest = ("fable-5-2", "mythos-5-2")
        if producer in latest:
            return self.key in latest
        if self.key in ("fable-5-1", "mythos-5-1"):
            return claude_api or producer != "opus-5-5"
        if self._is("opus", (5, 5)):
            return not producer.startswith(("fable-", "mythos-"))
        return True


def claude_profile(name: str) -> ClaudeProfile | None:
    """The model behind ``name``, or ``None`` if it is not a Claude model."""
    if not name.startswith("claude-"):
        return None
    match = _MODEL_RE.match(name)
    if match is None:
        return ClaudeProfile(name)
    if match.group("preview"):
        return ClaudeProfile(name, "mythos-preview")
    family = match.group("family") or match.group("ofamily")
    major = int(match.group("major") or match.group("omajor"))
    minor = int(match.group("minor") or match.group("ominor") or 0)
    return ClaudeProfile(name, family, (major, minor))
