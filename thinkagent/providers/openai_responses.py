"""The pinned import path of `OpenAIResponsesModel`, kept for code written against it.

The OpenAI family lives in `thinkagent.providers.openai`; import from there in new code.
`SCOPE` and `AZURE_SCOPE` are this module's earlier names for `RESPONSES_SCOPE` and
`AZURE_RESPONSES_SCOPE`.
"""

from .openai import (
    AZURE_RESPONSES_SCOPE,
    RESPONSES_SCOPE,
    OpenAIResponsesModel,
    OpenAIThinking,
    ReasoningEffort,
    ReasoningSummary,
    responses_scope,
)

SCOPE = RESPONSES_SCOPE
AZURE_SCOPE = AZURE_RESPONSES_SCOPE

__all__ = [
    "AZURE_RESPONSES_SCOPE",
    "AZURE_SCOPE",
    "RESPONSES_SCOPE",
    "SCOPE",
    "OpenAIResponsesModel",
    "OpenAIThinking",
    "ReasoningEffort",
    "ReasoningSummary",
    "responses_scope",
]
