"""The OpenAI family, over the official `openai` SDK: Chat Completions (OpenAI, Azure OpenAI and
the OpenAI-compatible reasoning endpoints, told apart by their `ChatDialect`) and the Responses
API (encrypted reasoning items replayed).

```python
from thinkagent.providers.openai import OpenAIChatModel, OpenAIResponsesModel, OpenAIThinking

chat = OpenAIChatModel("deepseek-v4-flash", dialect="deepseek")   # DEEPSEEK_API_KEY
responses = OpenAIResponsesModel("gpt-5", thinking=OpenAIThinking(effort="high", summary="auto"))
```

See `docs/providers/openai.md`.
"""

from ..._extras import needs

with needs("openai", "The OpenAI family (OpenAIChatModel, OpenAIResponsesModel)"):
    from ._wire import (
        OpenAIThinking,
        ReasoningContext,
        ReasoningEffort,
        ReasoningFormat,
        ReasoningMode,
        ReasoningSummary,
    )
    from .chat import OpenAIChatModel
    from .dialects import (
        DIALECTS,
        ChatDialect,
        MissingReasoning,
        ReasoningSource,
        ReplayRule,
        ReplayShape,
        ThinkingSwitch,
        resolve_dialect,
    )
    from .responses import (
        AZURE_RESPONSES_SCOPE,
        LOCAL_RESPONSES_SCOPE,
        MANTLE_SCOPE,
        RESPONSES_SCOPE,
        BedrockMantleModel,
        OpenAIResponsesModel,
        responses_scope,
        without_reasoning,
    )

__all__ = [
    "AZURE_RESPONSES_SCOPE",
    "DIALECTS",
    "LOCAL_RESPONSES_SCOPE",
    "MANTLE_SCOPE",
    "RESPONSES_SCOPE",
    "BedrockMantleModel",
    "ChatDialect",
    "MissingReasoning",
    "OpenAIChatModel",
    "OpenAIResponsesModel",
    "OpenAIThinking",
    "ReasoningContext",
    "ReasoningEffort",
    "ReasoningFormat",
    "ReasoningMode",
    "ReasoningSource",
    "ReasoningSummary",
    "ReplayRule",
    "ReplayShape",
    "ThinkingSwitch",
    "resolve_dialect",
    "responses_scope",
    "without_reasoning",
]
