"""The model families Bedrock's Converse API serves, and how each one's reasoning goes back.

Converse carries every family's reasoning in the same `reasoningContent` block, but each family
accepts a different shape back (`PROVIDER_RULES`, Bedrock section): Claude verifies its signed
blocks byte for byte; DeepSeek refuses any reasoning in a request ("User messages cannot contain
reasoning content"); gpt-oss refuses a signature; OpenAI's GPT-5 family and xAI return opaque
`redactedContent` that may go back as it is; Kimi K2 Thinking puts its reasoning inline, as
`<think>` tags in its text; Amazon Nova 2 bills its reasoning but shows it only as the text
`[REDACTED]`. So each family is a scope of its own (`bedrock` for Claude,
`bedrock-<family>@<region>` for the others: their reasoning is readable only by its issuer, and
Kimi K3's only in the issuing region), and a conversation that moves from one family to another
drops the other family's reasoning instead of sending a shape the new model refuses.

Each family also sets its reasoning in its own `additionalModelRequestFields` key: gpt-oss a flat
`reasoning_effort`, OpenAI's newer GPT-5 models a nested `reasoning.effort`, Qwen
`reasoning_config` (`low` or `high`), Nova 2 `reasoningConfig` (`{"type": "enabled",
"maxReasoningEffort": ...}`, off unless asked for).

Pure Python: no vendor SDK is imported here.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ...messages import Part, ThinkingBlock

__all__ = ["CLAUDE", "REDACTED_TEXT", "BedrockFamily", "bedrock_family"]

Replay = Literal["claude", "drop", "redacted", "inline"]
"""How a family's own reasoning goes back: Claude's rules (signed blocks, byte for byte), never,
as the opaque `redactedContent` it came as (other shapes never), or inline as `<think>` text."""

EffortField = Literal["reasoning_effort", "reasoning", "reasoning_config", "reasoningConfig"]
"""Where a family's reasoning level goes in `additionalModelRequestFields`: a flat
`reasoning_effort` (gpt-oss), a nested `reasoning: {"effort"}` (OpenAI's GPT-5 models), Qwen's
`reasoning_config`, or Nova 2's `reasoningConfig: {"type": "enabled", "maxReasoningEffort"}`."""

REDACTED_TEXT = "[REDACTED]"
"""What Nova 2 returns as its reasoning text (docs.aws.amazon.com/nova/latest/nova2-userguide/
reasoning-capabilities.html): a placeholder, not reasoning."""

_REGION_PREFIX = re.compile(r"^(?:us|eu|apac|ap|jp|au|ca|global|us-gov)\.")
_LEVELS = ("low", "medium", "high")


@dataclass(frozen=True, slots=True)
class BedrockFamily:
    """One model family on Converse: its `name`, how its reasoning goes back (`replay`), where
    its reasoning level goes (`effort_field`, None: it has no knob) and the levels it takes,
    whether it reasons only when asked (`off_by_default`), whether it returns its reasoning as
    `[REDACTED]` text (`redacts_text`), and whether it takes tools (`tools_refusal`: the
    service's words when it does not)."""

    name: str
    replay: Replay
    effort_field: EffortField | None = None
    efforts: tuple[str, ...] = _LEVELS
    off_by_default: bool = False
    redacts_text: bool = False
    tools_refusal: str | None = None

    @property
    def is_claude(self) -> bool:
        return self.replay == "claude"

    def reasoning_fields(self, effort: str | None, *, enabled: bool) -> dict[str, Any]:
        """The `additionalModelRequestFields` that set this family's reasoning: `effort` (None:
        the model's default level) where it has a knob; `enabled` turns on a family that
        reasons only when asked (Nova 2)."""
        field = self.effort_field
        if field == "reasoningConfig":
            if not enabled and effort is None:
                return {}
            config: dict[str, Any] = {"type": "enabled"}
            if effort is not None:
                config["maxReasoningEffort"] = effort
            return {field: config}
        if field is None or effort is None:
            return {}
        if field == "reasoning":
            return {field: {"effort": effort}}
        return {field: effort}

    def received(self, parts: Sequence[Part]) -> list[Part]:
        """A response's parts as kept: a family that returns `[REDACTED]` as its reasoning text
        gets a redacted block with no payload there (billed reasoning that was never shown and
        can never go back as text)."""
        if not self.redacts_text:
            return list(parts)
        return [
            ThinkingBlock.redacted_payload("")
            if isinstance(p, ThinkingBlock) and p.redacted is None and p.text == REDACTED_TEXT
            else p
            for p in parts
        ]


CLAUDE = BedrockFamily("claude", "claude")
"""Claude, and any model id the rules cannot read (an application inference profile ARN)."""


def bedrock_family(model_id: str) -> BedrockFamily:
    """The family of a Converse model id (`us.deepseek.r1-v1:0`, `openai.gpt-oss-120b-1:0`,
    `moonshot.kimi-k2-thinking`, `us.amazon.nova-2-lite-v1:0`, an ARN...)."""
    model = model_id.rsplit("/", 1)[-1] if model_id.startswith("arn:") else model_id
    model = _REGION_PREFIX.sub("", model.lower())
    provider, _, name = model.partition(".")
    if provider == "anthropic" or not name:
        return CLAUDE
    if provider == "deepseek":
        refusal = "This model doesn't support tool use." if name.startswith("r1") else None
        return BedrockFamily("deepseek", "drop", tools_refusal=refusal)
    if provider == "openai":
        if "gpt-oss" in name:
            return BedrockFamily("openai", "drop", effort_field="reasoning_effort")
        return BedrockFamily("openai", "redacted", effort_field="reasoning")
    if provider in ("moonshot", "moonshotai"):
        return BedrockFamily("moonshot", "redacted" if "k3" in name else "inline")
    if provider == "xai":
        return BedrockFamily("xai", "redacted")
    if provider == "qwen":
        return BedrockFamily(
            "qwen", "drop", effort_field="reasoning_config", efforts=("low", "high")
        )
    if provider == "amazon" and name.startswith("nova-2"):
        return BedrockFamily(
            "nova", "drop", effort_field="reasoningConfig", off_by_default=True, redacts_text=True
        )
    if provider == "amazon":
        return BedrockFamily("nova", "drop", off_by_default=True, efforts=())
    return BedrockFamily(provider, "drop")
