"""Fault injection: queued per-request failures, applied by the framework to any wire API.

Faults wait in a FIFO queue. Each incoming request of a matching wire API (``api=None``
matches all) takes the first matching fault, which is then consumed, whatever the
request turns out to be. What each fault does:

``http``
    The request is answered at once with the status and the wire API's native error
    body (429 sends ``retry-after`` and ``retry-after-ms``; 529 is Anthropic's
    ``overloaded_error``).
``stream_error``
    The response starts normally (200); after ``after`` events an in-stream error event
    is sent and the stream ends (Anthropic ``event: error``; Bedrock an exception
    message). On a non-streamed response it behaves like ``http``.
``cut``
    The response stops after ``after`` events and the TCP connection is closed without
    the terminating chunk (a non-streamed body is cut in half). The default point is
    in the middle of the first thinking block, before its signature.
``malformed``
    A 200 whose body is not valid JSON (for a stream: one event with an invalid
    payload after ``after`` events).
``slow``
    Only the per-chunk ``delay``. Every kind accepts ``delay``: the seconds to wait
    before each event (a non-streamed body is one chunk).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Literal

__all__ = ["Fault", "FaultKind", "FaultQueue"]

FaultKind = Literal["http", "stream_error", "cut", "malformed", "slow"]


@dataclass(frozen=True)
class Fault:
    """One injected failure; build it with the class methods."""

    kind: FaultKind
    api: str | None = None
    status: int = 0
    message: str | None = None
    retry_after: float | None = None
    after: int | None = None
    delay: float = 0.0

    @classmethod
    def http(
        cls,
        status: int,
        message: str | None = None,
        *,
        retry_after: float | None = None,
        api: str | None = None,
    ) -> Fault:
        """Answer with ``status`` and the native error body (``message`` overrides the
        wire API's default text). A 429 defaults to ``retry_after=0.01`` seconds."""
        if retry_after is None and status == 429:
            retry_after = 0.01
        return cls("http", api=api, status=status, message=message, retry_after=retry_after)

    @classmethod
    def rate_limited(cls, *, retry_after: float = 0.01, api: str | None = None) -> Fault:
        """HTTP 429 with ``retry-after``."""
        return cls.http(429, retry_after=retry_after, api=api)

    @classmethod
    def overloaded(cls, *, api: str | None = None) -> Fault:
        """HTTP 529 (Anthropic ``overloaded_error``; other wires map it to their own 5xx error)."""
        return cls.http(529, api=api)

    @classmethod
    def stream_error(
        cls,
        status: int = 529,
        message: str | None = None,
        *,
        after: int | None = None,
        delay: float = 0.0,
        api: str | None = None,
    ) -> Fault:
        """An error event in the middle of a 200 stream (``status`` picks the error type:
        529 overloaded, 429 rate limit/throttling, 500 internal...)."""
        return cls(
            "stream_error", api=api, status=status, message=message, after=after, delay=delay
        )

    @classmethod
    def cut(cls, *, after: int | None = None, delay: float = 0.0, api: str | None = None) -> Fault:
        """Close the connection mid-response, by default in the middle of the thinking."""
        return cls("cut", api=api, after=after, delay=delay)

    @classmethod
    def malformed(cls, *, after: int | None = None, api: str | None = None) -> Fault:
        """A 200 with a body (or one stream event) that is not valid JSON."""
        return cls("malformed", api=api, after=after)

    @classmethod
    def slow(cls, delay: float, *, api: str | None = None) -> Fault:
        """Wait ``delay`` seconds before each event (or before a non-streamed body)."""
        return cls("slow", api=api, delay=delay)


class FaultQueue:
    """Thread-safe FIFO of pending faults."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._items: list[Fault] = []

    def add(self, fault: Fault, times: int = 1) -> None:
        """Queue ``fault`` for the next ``times`` matching requests."""
        with self._lock:
            self._items.extend([fault] * times)

    def take(self, api: str) -> Fault | None:
        """Remove and return the first fault for ``api`` (or for any API)."""
        if not self._items:  # lock-free fast path: the common case has no faults
            return None
        with self._lock:
            for index, fault in enumerate(self._items):
                if fault.api is None or fault.api == api:
                    return self._items.pop(index)
        return None

    def pending(self) -> list[Fault]:
        """The faults still queued."""
        with self._lock:
            return list(self._items)

    def clear(self) -> None:
        """Drop every pending fault."""
        with self._lock:
            self._items.clear()
