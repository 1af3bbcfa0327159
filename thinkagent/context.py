"""`RunContext`: what a tool or an instructions function learns about the run it serves."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Generic

from typing_extensions import TypeVar

from .messages import Message, Usage

if TYPE_CHECKING:
    from .providers.base import Model

__all__ = ["DepsT", "RunContext"]

DepsT = TypeVar("DepsT", default=None)
"""The type of a run's dependencies (`Agent(..., deps_type=D)`); None when there are none."""


@dataclass(frozen=True, slots=True)
class RunContext(Generic[DepsT]):
    """The run a tool call (or an instructions function) belongs to.

    A tool receives it when its first parameter is annotated `RunContext[D]`; that parameter is
    not part of the tool's schema. One `Agent` serves many runs at once: each call gets the
    context of its own run.

    - `deps`: what was passed as `agent.run(..., deps=...)`.
    - `usage`: what the run had consumed when the call started.
    - `messages`: the run's evidence when the call started (the history given to the run, then
      this run's messages, the assistant message with this call last).
    - `model`: the model the run asks.
    - `tool_name`, `tool_call_id`: the call being run (None for instructions).
    - `retry`: in how many model turns in a row this tool had failed before this call (0 on a
      first attempt), so a tool can change course on a retry.
    - `tool_call_approved`: the call was approved (`approvals={id: True}` after it asked), so a
      tool that raises `ApprovalRequired` knows not to ask again.
    """

    deps: DepsT
    usage: Usage
    messages: Sequence[Message]
    model: Model
    tool_name: str | None = None
    tool_call_id: str | None = None
    retry: int = 0
    tool_call_approved: bool = False
