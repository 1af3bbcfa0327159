"""Claude's refusals: what a refused response says (`stop_details`), and the retry on another
model it allows.

A response that stops with `stop_reason: "refusal"` carries `stop_details`: the policy
`category` (`cyber`, `bio`, `frontier_llm`, `reasoning_extraction`, `general_harms`, or null),
a human-readable `explanation`, and with the `fallback-credit-2026-07-01` beta a
`fallback_credit_token` (five minutes' life) that makes a retry on a fallback model cost what
the warm prefix would have. The retry sends the same body with the token, or, where
`fallback_has_prefill_claim` says so, the same body plus the refused partial turn as a
prefill: its final text without trailing whitespace, without unpaired `tool_use` blocks, and
without trailing thinking, which the service refuses at the end of an assistant turn
(platform.claude.com/docs/en/build-with-claude/refusals-and-fallback; anthropic-sdk-python
`lib/middleware/_fallbacks.py`).

Pure Python: no vendor SDK is imported here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

from ...messages import Message, Part, TextPart, ThinkingBlock, ToolCall
from ..base import ModelSettings

__all__ = ["CREDIT_BETA", "ClaudeRefusal"]

CREDIT_BETA = "fallback-credit-2026-07-01"
"""The beta that makes a refusal carry a credit token, and a retry redeem it."""


@dataclass(frozen=True, slots=True)
class ClaudeRefusal:
    """A Claude refusal, read from the refused message (`ClaudeRefusal.of`).

    ```python
    refusal = ClaudeRefusal.of(result.messages[-1])
    if refusal is not None and refusal.credit_token:
        other = AnthropicModel("claude-opus-4-8", settings=refusal.retry_settings())
        retried = await Agent(other).run(None, history=result.messages[:-1])
    ```
    """

    category: str | None
    explanation: str | None
    credit_token: str | None
    prefill_claim: bool
    recommended_model: str | None

    @classmethod
    def of(cls, message: Message) -> ClaudeRefusal | None:
        """The refusal `message` reports (its `stop_details`), or None when it is no refusal."""
        if message.finish_reason != "refusal":
            return None
        raw = (message.provider_details or {}).get("stop_details")
        details = cast("dict[str, Any]", raw) if isinstance(raw, dict) else {}

        def text(key: str) -> str | None:
            value = details.get(key)
            return value if isinstance(value, str) else None

        return cls(
            category=text("category"),
            explanation=text("explanation"),
            credit_token=text("fallback_credit_token"),
            prefill_claim=details.get("fallback_has_prefill_claim") is True,
            recommended_model=text("recommended_model"),
        )

    def retry_settings(self, *, best_effort: bool = False) -> ModelSettings:
        """The settings of the retry on a fallback model: the credit token (as the object
        form with `mode: "best_effort"` when `best_effort`: the retry is served even when the
        token cannot be redeemed) and the beta it needs. Empty without a token."""
        if self.credit_token is None:
            return {}
        token: Any = (
            {"token": self.credit_token, "mode": "best_effort"}
            if best_effort
            else self.credit_token
        )
        return {
            "extra_body": {"fallback_credit_token": token},
            "extra_headers": {"anthropic-beta": CREDIT_BETA},
        }

    def retry_history(self, messages: Sequence[Message]) -> list[Message]:
        """The messages a retry sends for a history ending with the refused message: with the
        refused turn as a prefill when the refusal grants one (its final text without trailing
        whitespace, no unpaired tool call, no trailing thinking), else without it. Send it with
        `model.request`: a history ending with the model's message is a prefill, not a run."""
        if not messages or messages[-1].role != "assistant":
            return list(messages)
        before, refused = list(messages[:-1]), messages[-1]
        if not self.prefill_claim:
            return before
        parts: list[Part] = [p for p in refused.parts if not isinstance(p, ToolCall)]
        while parts and isinstance(parts[-1], ThinkingBlock):
            parts.pop()
        if parts and isinstance(parts[-1], TextPart):
            stripped = parts[-1].text.rstrip()
            parts[-1] = parts[-1].model_copy(update={"text": stripped})
            if not stripped:
                parts.pop()
        if not parts:
            return before
        return [*before, refused.model_copy(update={"parts": tuple(parts)})]
