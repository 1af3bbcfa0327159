"""thinkagent: agents that keep, stream, persist and replay every thinking block with its proof.

The public API is re-exported here; adapters live in `thinkagent.providers.*`, the local
emulator in `thinkagent.emulator`, test helpers in `thinkagent.testing`.
"""

from .agent import Agent, AgentEvent, AgentStream, RunResult, UsageLimits
from .errors import (
    ConfigurationError,
    HistoryError,
    MaxTurnsExceeded,
    ProviderError,
    RunCancelled,
    StreamInterrupted,
    ThinkAgentError,
    ToolError,
    ToolRetriesExceeded,
    UsageLimitExceeded,
)
from .history import ForeignReasoning, HistoryProcessor, repair, trim_history, validate_history
from .messages import (
    FinishReason,
    Message,
    Part,
    TextPart,
    ThinkingBlock,
    ToolCall,
    ToolResult,
    Usage,
    dump_messages,
    load_messages,
)
from .providers.base import Model, ModelRequest, ModelResponse, ModelSettings, ToolDefinition
from .stream import MessageAssembler, TextDelta, ThinkingDelta, ToolCallDelta, ToolResultEvent
from .tools import Tool

__version__ = "0.1.0"

__all__ = [
    "Agent",
    "AgentEvent",
    "AgentStream",
    "ConfigurationError",
    "FinishReason",
    "ForeignReasoning",
    "HistoryError",
    "HistoryProcessor",
    "MaxTurnsExceeded",
    "Message",
    "MessageAssembler",
    "Model",
    "ModelRequest",
    "ModelResponse",
    "ModelSettings",
    "Part",
    "ProviderError",
    "RunCancelled",
    "RunResult",
    "StreamInterrupted",
    "TextDelta",
    "TextPart",
    "ThinkAgentError",
    "ThinkingBlock",
    "ThinkingDelta",
    "Tool",
    "ToolCall",
    "ToolCallDelta",
    "ToolDefinition",
    "ToolError",
    "ToolResult",
    "ToolResultEvent",
    "ToolRetriesExceeded",
    "Usage",
    "UsageLimitExceeded",
    "UsageLimits",
    "__version__",
    "dump_messages",
    "load_messages",
    "repair",
    "trim_history",
    "validate_history",
]
