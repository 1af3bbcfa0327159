"""The model port: what the agent asks of a model, whatever the provider behind it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypedDict, runtime_checkable

from ..messages import FinishReason, Message, Usage
from ..stream import ModelDelta

__all__ = [
    "Model",
    "ModelRequest",
    "ModelResponse",
    "ModelSettings",
    "ModelStreamEvent",
    "ToolChoice",
    "ToolDefinition",
]

ToolChoice = Literal["auto", "none", "required"] | str
"""`auto`, `none`, `required` (some tool), or the name of the one tool the model must call."""


class ModelSettings(TypedDict, total=False):
    """Per-request settings every adapter understands. Thinking is configured on each model."""

    max_tokens: int
    temperature: float
    top_p: float
    stop_sequences: list[str]
    tool_choice: ToolChoice
    parallel_tool_calls: bool
    timeout: float
    extra_headers: dict[str, str]
    extra_body: dict[str, Any]


@dataclass(frozen=True, slots=True)
class ToolDefinition:
    """A tool as the model sees it: name, description and a JSON schema for its arguments."""

    name: str
    description: str
    parameters: dict[str, Any]


@dataclass(frozen=True, slots=True)
class ModelRequest:
    """One request to a model: the conversation so far, the tools on offer, the settings."""

    messages: Sequence[Message]
    tools: Sequence[ToolDefinition] = ()
    instructions: str | None = None
    settings: ModelSettings = field(default_factory=lambda: ModelSettings())


@dataclass(frozen=True, slots=True)
class ModelResponse:
    """One complete model response: a single assistant message with its usage and finish reason."""

    message: Message

    @property
    def usage(self) -> Usage:
        return self.message.usage or Usage()

    @property
    def finish_reason(self) -> FinishReason | None:
        return self.message.finish_reason


ModelStreamEvent = ModelDelta | ModelResponse
"""What `Model.stream` yields: deltas, then exactly one `ModelResponse`, last."""


@runtime_checkable
class Model(Protocol):
    """A reasoning model behind one wire API.

    `stream` yields deltas as they arrive and ends with the same `ModelResponse` that `request`
    returns for the same response; a stream cut short raises `StreamInterrupted` instead.
    """

    @property
    def model_name(self) -> str: ...

    @property
    def scope(self) -> str:
        """The replay identity of this model's messages: their proofs go back only here."""
        ...

    async def request(self, request: ModelRequest) -> ModelResponse: ...

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelStreamEvent]: ...
