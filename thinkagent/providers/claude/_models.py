"""What thinkagent knows of each Claude model from its name: the thinking types it takes, whether
it thinks when asked nothing, which models' thinking it can read, and whether it binds thinking
to its prefix (preserved thinking).

The facts are Anthropic's (platform.claude.com/docs/en/build-with-claude/thinking,
…/thinking-troubleshooting, …/preserved-thinking and the "what's new" page of each model). A name
these rules cannot read (an inference profile ARN, a model newer than them) gets no refusal and
no repair: the service's own answer decides.

Pure Python: no vendor SDK is imported here.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Literal

__all__ = ["ClaudeInfo", "claude_info", "claude_name"]

_NAME = re.compile(
    r"^claude-(?:(?P<family>opus|sonnet|haiku|fable|mythos)-(?P<major>\d+)(?:-(?P<minor>\d{1,2}))?"
    r"(?=-|@|$)|(?P<omajor>\d+)(?:-(?P<ominor>\d{1,2}))?-(?P<ofamily>opus|sonnet|haiku)"
    r"|(?P<preview>mythos-preview))"
)
_BEDROCK_VERSION = re.compile(r"-v\d+(?::\d+)?$")

_ENABLED = (
    '"thinking.type.enabled" is not supported for this model. Use "thinking.type.adaptive" and '
    '"output_config.effort" to control thinking behavior.'
)
_DISABLED = (
    '"thinking.type.disabled" is not supported for this model. Use "thinking.type.adaptive" and '
    '"output_config.effort" to control thinking behavior.'
)
_DISABLED_PREVIEW = (
    '"thinking.type.disabled" is not supported for this model. Thinking defaults to adaptive '
    'mode when not specified; use "thinking.type.enabled" with "budget_tokens" for extended '
    "thinking."
)
# Anthropic says Sonnet 5.5's refusal of `disabled` points to `between_tools`; its exact words
# are not published.
_DISABLED_SONNET_5_5 = (
    '"thinking.type.disabled" is not supported for this model. Use "thinking.type.between_tools" '
    "to turn off up-front thinking."
)
_ADAPTIVE = "adaptive thinking is not supported on this model"
_BETWEEN_TOOLS = '"thinking.type.between_tools" is not supported for this model.'

ThinkingKind = Literal["adaptive", "enabled", "disabled", "between_tools"]


def claude_name(model_id: str) -> str | None:
    """The Claude model name behind an Anthropic model name or a Bedrock model id (region
    prefix, ARN and version suffix removed), or None when it is not a Claude model."""
    start = model_id.find("claude-")
    if start < 0:
        return None
    if start > 0 and not model_id[:start].endswith(("anthropic.", "/")):
        return None
    return _BEDROCK_VERSION.sub("", model_id[start:])


@dataclass(frozen=True, slots=True)
class ClaudeInfo:
    """One Claude model, as its name tells it: `family` (`opus`, `sonnet`, `haiku`, `fable`,
    `mythos`, or `mythos-preview`) and `version` (`(5, 5)` for Opus 5.5)."""

    family: str
    version: tuple[int, int]

    def is_(self, family: str, *versions: tuple[int, int]) -> bool:
        return self.family == family and (not versions or self.version in versions)

    def at_least(self, family: str, version: tuple[int, int]) -> bool:
        return self.family == family and self.version >= version

    @property
    def _newest(self) -> bool:
        """The 5.x models with preserved thinking and adaptive-only thinking."""
        return (self.family in ("fable", "mythos") and self.version >= (5, 0)) or self.at_least(
            "opus", (5, 5)
        )

    def refusal(self, kind: ThinkingKind) -> str | None:
        """The service's 400 for a request with thinking `kind` on this model, or None when the
        model takes it."""
        if kind == "between_tools":
            return None if self.at_least("sonnet", (5, 5)) else _BETWEEN_TOOLS
        if kind == "adaptive":
            return _ADAPTIVE if self._budget_only else None
        if kind == "enabled":
            if self._budget_only or self.is_("mythos-preview"):
                return None
            if self.family in ("opus", "sonnet") and self.version == (4, 6):
                return None
            return _ENABLED
        if self.is_("mythos-preview"):
            return _DISABLED_PREVIEW
        if self.at_least("sonnet", (5, 5)):
            return _DISABLED_SONNET_5_5
        return _DISABLED if self._newest else None

    @property
    def _budget_only(self) -> bool:
        """Thinking only with a budget (`enabled`): Claude 4.5 and earlier."""
        return self.family in ("opus", "sonnet", "haiku") and self.version < (4, 6)

    @property
    def thinks_by_default(self) -> bool:
        """Whether the model thinks (adaptively) when the request has no `thinking` field."""
        if self.family in ("fable", "mythos", "mythos-preview"):
            return True
        return (
            self.at_least("opus", (5, 0))
            or self.at_least("sonnet", (5, 0))
            or (self.at_least("haiku", (5, 5)))
        )

    @property
    def reasons(self) -> bool:
        """Whether the model thinks at all: Claude 3.7 Sonnet and every model since; Claude 3.5
        and earlier answer `'<model>' does not support thinking.` to a thinking request."""
        if self.family not in ("opus", "sonnet", "haiku"):
            return True
        return self.version >= (4, 0) or self.is_("sonnet", (3, 7))

    @property
    def can_disable(self) -> bool:
        """Whether `{"type": "disabled"}` turns thinking off on this model."""
        return self.refusal("disabled") is None

    @property
    def adaptive(self) -> bool:
        """Whether the model takes adaptive thinking (and `output_config.effort` for it)."""
        return not self._budget_only

    @property
    def structured_output(self) -> bool:
        """Whether the model takes `output_config.format` (JSON outputs, with thinking and
        tools): Claude 4.5 and newer."""
        return self.family not in ("opus", "sonnet", "haiku") or self.version >= (4, 5)

    @property
    def binds_prefix(self) -> bool:
        """Whether the model checks each replayed thinking block against the prefix it was
        produced under (preserved thinking: Fable and Mythos 5.1+, Opus, Sonnet and Haiku 5.5+)."""
        if self.family in ("fable", "mythos"):
            return self.version >= (5, 1)
        return self.family in ("opus", "sonnet", "haiku") and self.version >= (5, 5)

    @property
    def takes_system_messages(self) -> bool:
        """Whether the model takes mid-conversation system messages (`role: "system"` inside
        `messages`): Opus 4.8 and newer, Sonnet and Haiku 5.5, Fable and Mythos 5 and newer;
        older models (and Sonnet 5) answer "role 'system' is not supported on this model"."""
        if self.family in ("fable", "mythos"):
            return self.version >= (5, 0)
        if self.family == "opus":
            return self.version >= (4, 8)
        return self.family in ("sonnet", "haiku") and self.version >= (5, 5)

    @property
    def caches_on_bedrock(self) -> bool:
        """Whether Bedrock caches prompts for this model: Claude 3.5 Haiku, 3.7 Sonnet and
        newer (docs.aws.amazon.com/bedrock/latest/userguide/prompt-caching.html); a request
        with a `cachePoint` to another model is refused."""
        if self.family not in ("opus", "sonnet", "haiku"):
            return True
        return self.version >= (3, 7) or self.is_("haiku", (3, 5))

    @property
    def account_bound(self) -> bool:
        """Whether this model's thinking is valid only in the account that produced it."""
        return self.is_("sonnet", (5, 5)) or self.is_("haiku", (5, 5))

    @property
    def refuses_forced_tools(self) -> bool:
        """Whether the model refuses `tool_choice` `any`/`tool` on every request (not only with
        a thinking budget)."""
        return (
            self.is_("opus", (5, 5))
            or self.is_("fable", (5, 1))
            or self.is_("mythos", (5, 1))
            or self.is_("sonnet", (5, 5))
        )

    def reads(self, producer: ClaudeInfo, *, claude_api: bool) -> bool:
        """Whether this model can read thinking `producer` wrote (`claude_api`: the request goes
        to the Claude API, where Fable and Mythos 5.1 also read Opus 5.5). Blocks a model cannot
        read are dropped by the service without an error."""
        if producer == self or producer.is_("haiku", (5, 5)):
            return True
        if self.is_("haiku", (5, 5)):
            return False
        latest = (("fable", (5, 2)), ("mythos", (5, 2)))
        if (producer.family, producer.version) in latest:
            return (self.family, self.version) in latest
        if self.is_("fable", (5, 1)) or self.is_("mythos", (5, 1)):
            return claude_api or not producer.is_("opus", (5, 5))
        if self.is_("opus", (5, 5)):
            return producer.family not in ("fable", "mythos", "mythos-preview")
        return True

    def __str__(self) -> str:
        if self.family == "mythos-preview":
            return "Claude Mythos Preview"
        major, minor = self.version
        return f"Claude {self.family.capitalize()} {major}" + (f".{minor}" if minor else "")


@functools.lru_cache(maxsize=256)
def claude_info(model_id: str | None) -> ClaudeInfo | None:
    """The model behind `model_id` (an Anthropic name or a Bedrock id), or None when the name
    does not tell (another vendor's model, an inference profile ARN)."""
    name = claude_name(model_id) if model_id else None
    match = _NAME.match(name) if name else None
    if match is None:
        return None
    if match.group("preview"):
        return ClaudeInfo("mythos-preview", (0, 0))
    family = match.group("family") or match.group("ofamily")
    major = int(match.group("major") or match.group("omajor"))
    minor = int(match.group("minor") or match.group("ominor") or 0)
    return ClaudeInfo(family, (major, minor))
