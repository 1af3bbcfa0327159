"""`BedrockModel` and `ClaudeThinking` at their first import path.

They live in the Claude family, `thinkagent.providers.claude` (with `AnthropicModel` and the
`Effort`, `ThinkingDisplay` and `ThinkingType` types); see `docs/providers/bedrock.md`.
"""

from __future__ import annotations

from .claude import ClaudeThinking
from .claude.bedrock import BedrockModel

__all__ = ["BedrockModel", "ClaudeThinking"]
