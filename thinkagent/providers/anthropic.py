"""`AnthropicModel` and `ClaudeThinking` at their first import path.

They live in the Claude family, `thinkagent.providers.claude` (with `BedrockModel` and the
`Effort`, `ThinkingDisplay` and `ThinkingType` types); see `docs/providers/anthropic.md`.
"""

from __future__ import annotations

from .._extras import needs
from .claude import ClaudeThinking

with needs("anthropic", "AnthropicModel"):
    from .claude.anthropic import AnthropicModel

__all__ = ["AnthropicModel", "ClaudeThinking"]
