"""`BedrockModel` and `ClaudeThinking` at their first import path.

They live in the Claude family, `thinkagent.providers.claude` (with `AnthropicModel` and the
`Effort`, `ThinkingDisplay` and `ThinkingType` types); see `docs/providers/bedrock.md`.
"""

from __future__ import annotations

from .._extras import needs
from .claude import ClaudeThinking

with needs("bedrock", "BedrockModel"):
    from .claude.bedrock import BedrockModel

__all__ = ["BedrockModel", "ClaudeThinking"]
