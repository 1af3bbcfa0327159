"""The model families Bedrock's Converse API serves, and how each one's reasoning goes back.

Converse carries every family's reasoning in the same `reasoningContent` block, but each family
accepts a different shape back (`PROVIDER_RULES`, Bedrock section): Claude verifies its signed
blocks byte for byte; DeepSeek refuses any reasoning in a request ("User messages cannot contain
reasoning content"); gpt-oss refuses a signature; OpenAI's GPT-5 family and xAI return opaque
`redactedContent` that may go back as it is; Kimi K2 Thinking puts its reasoning inline, as
`<think>` tags in its text. So each family is a scope of its own (`bedrock` for Claude,
`bedrock-<family>@<region>` for the others: their reasoning is readable only by its issuer, and
Kimi K3's only in the issuing region), and a conversation that moves from one family to another
drops the other family's reasoning instead of sending a shape the new model refuses.

Pure Python: no vendor SDK is imported here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

__all__ = ["CLAUDE", "BedrockFamily", "bedrock_family"]

Replay = Literal["claude", "drop", "redacted", "inline"]
"""How a family's own reasoning goes back: Claude's rules (signed blocks, byte for byte), never,
as the opaque `redactedContent` it came as (other shapes never), or inline as `<think>` text."""

_REGION_PREFIX = re.compile(r"^(?:us|eu|apac|ap|jp|au|ca|global|us-gov)\.")


@dataclass(frozen=True, slots=True)
class BedrockFamily:
    """One model family on Converse: its `name`, how its reasoning goes back (`replay`), the
    `additionalModelRequestFields` key of its reasoning effort (None: it has no knob), and
    whether it takes tools (`tools_refusal`: the service's words when it does not)."""

    name: str
    replay: Replay
    effort_field: str | None = None
    tools_refusal: str | None = None

    @property
    def is_claude(self) -> bool:
        return self.replay == "claude"


CLAUDE = BedrockFamily("claude", "claude")
"""Claude, and any model id the rules cannot read (an application inference profile ARN)."""


def bedrock_family(model_id: str) -> BedrockFamily:
    """The family of a Converse model id (`us.deepseek.r1-v1:0`, `openai.gpt-oss-120b-1:0`,
    `moonshot.kimi-k2-thinking`, an ARN...)."""
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
        return BedrockFamily("openai", "redacted", effort_field="reasoning_effort")
    if provider in ("moonshot", "moonshotai"):
        return BedrockFamily("moonshot", "redacted" if "k3" in name else "inline")
    if provider == "xai":
        return BedrockFamily("xai", "redacted")
    return BedrockFamily(provider, "drop")
