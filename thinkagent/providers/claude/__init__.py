"""The Claude family: `AnthropicModel` (the Messages API, through `anthropic`) and
`BedrockModel` (AWS Bedrock's Converse API, through boto3), with the thinking configuration
both take.

```python
from thinkagent.providers.claude import AnthropicModel, ClaudeThinking

model = AnthropicModel("claude-opus-4-7", thinking=ClaudeThinking.adaptive(), effort="high")
```

Each model is imported on first use, so importing the family needs only the SDK of the model
you use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ..._extras import needs
from ._refusals import ClaudeRefusal
from ._rules import (
    CLAUDE_PLATFORMS,
    MIN_BUDGET_TOKENS,
    ClaudeThinking,
    Effort,
    PrefixMismatchBehavior,
    ThinkingDisplay,
    ThinkingType,
    thinking_signers,
)

if TYPE_CHECKING:
    from .anthropic import AnthropicModel
    from .bedrock import BedrockModel

__all__ = [
    "CLAUDE_PLATFORMS",
    "MIN_BUDGET_TOKENS",
    "AnthropicModel",
    "BedrockModel",
    "ClaudeRefusal",
    "ClaudeThinking",
    "Effort",
    "PrefixMismatchBehavior",
    "ThinkingDisplay",
    "ThinkingType",
    "thinking_signers",
]

_MODELS = {"AnthropicModel": ("anthropic", ".anthropic"), "BedrockModel": ("bedrock", ".bedrock")}


def __getattr__(name: str) -> Any:
    extra, module = _MODELS.get(name, ("", ""))
    if not module:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    with needs(extra, name):
        value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
