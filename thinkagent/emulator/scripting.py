"""Scripted replies: exact assistant turns queued per wire API, for users' own tests.

``emulator.script("anthropic", [Reply(...), Reply(...)])`` makes the next two successful
Anthropic requests answer with those replies, rendered natively and signed like any
other; afterwards the brain answers again. Requests that fail validation do not consume
a scripted reply.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable

    from .model import Reply

__all__ = ["ScriptBook"]


class ScriptBook:
    """Thread-safe FIFO queues of :class:`~thinkagent.emulator.model.Reply` per wire API
    (``None`` is a queue that serves any API, used after the API's own queue)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._queues: dict[str | None, list[Reply]] = {}

    def add(self, api: str | None, replies: Iterable[Reply]) -> None:
        """Append ``replies`` to the queue of ``api``."""
        items = list(replies)
        with self._lock:
            self._queues.setdefault(api, []).extend(items)

    def take(self, api: str) -> Reply | None:
        """Pop the next reply for ``api``, or ``None`` when its script is exhausted."""
        if not self._queues:
            return None
        with self._lock:
            for key in (api, None):
                queue = self._queues.get(key)
                if queue:
                    reply = queue.pop(0)
                    if not queue:
                        del self._queues[key]
                    return reply
        return None

    def pending(self, api: str | None = None) -> int:
        """How many replies are still queued for ``api``."""
        with self._lock:
            return len(self._queues.get(api, ()))

    def clear(self) -> None:
        """Drop every queued reply."""
        with self._lock:
            self._queues.clear()
