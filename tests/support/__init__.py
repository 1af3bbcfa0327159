"""What the test suite shares: the recorded exchanges, client fixtures, and per-family helpers."""

from __future__ import annotations

from collections.abc import Sequence

from thinkagent import Message, Usage


def without_ids(messages: Sequence[Message]) -> list[Message]:
    """Messages with their response ids cleared (two requests get two ids) and their cache
    counts zeroed (a request reads what the same prefix left in the cache before it)."""
    return [m.model_copy(update={"id": None, "usage": uncached(m.usage)}) for m in messages]


def uncached(usage: Usage | None) -> Usage | None:
    """`usage` without its cache counts."""
    if usage is None:
        return None
    return usage.model_copy(update={"cache_read_tokens": 0, "cache_write_tokens": 0})
