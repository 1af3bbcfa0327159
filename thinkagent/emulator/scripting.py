"""Scripted replies: exact assistant turns queued per wire API, for users' own tests.

``emulator.script("anthropic", [Reply(...), Reply(...)])`` makes the next two successful
Anthropic requests answer with those replies, rendered natively and signed like any
other; afterwards the brain answers again. Requests that fail validation do not consume
a scripted reply, and a reply whose response a fault breaks goes back to the front of its
queue (the SDK's retry gets it).
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

    def take(self, api: str) -> tuple[str | None, Reply] | None:
        """Pop the next reply for ``api`` with the key of the queue it came from, or
        ``None`` when its script is exhausted."""
        if not self._queues:
            return None
        with self._lock:
            for key in (api, None):
                queue = self._queues.get(key)
                if queue:
                    reply = queue.pop(0)
                    if not queue:
                        del self._queues[key]
                    return key, reply
        return None

    def restore(self, taken: Iterable[tuple[str | None, Reply]]) -> None:
        """Put replies returned by :meth:`take` back at the front of their queues, in
        their original order."""
        with self._lock:
            for key, reply in reversed(list(taken)):
                self._queues.setdefault(key, []).insert(0, reply)

    def clear(self) -> None:
        """Drop every queued reply."""
        with self._lock:
            self._queues.clear()
