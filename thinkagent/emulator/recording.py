"""Recording of every request the emulator receives, with credentials removed."""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "CREDENTIAL_HEADERS",
    "CREDENTIAL_QUERY",
    "MAX_RECORDED",
    "RecordedRequest",
    "Recorder",
    "auth_scheme",
]

#: How many requests a :class:`Recorder` keeps by default (the most recent ones).
MAX_RECORDED = 10_000

#: Request headers that carry credentials; they are never recorded.
CREDENTIAL_HEADERS = frozenset(
    {
        "authorization",
        "proxy-authorization",
        "x-api-key",
        "api-key",
        "x-goog-api-key",
        "x-amz-security-token",
        "cookie",
    }
)
#: Query parameters that carry credentials (``?key=`` on the Gemini API).
CREDENTIAL_QUERY = frozenset({"key", "api_key", "api-key", "access_token"})


def auth_scheme(headers: Mapping[str, str]) -> str | None:
    """How the request authenticated, without the secret: the ``Authorization`` scheme
    (``Bearer``, ``AWS4-HMAC-SHA256``) or the name of the key header that was present."""
    value = headers.get("authorization")
    if value:
        return value.split(" ", 1)[0]
    for name in ("x-api-key", "api-key", "x-goog-api-key"):
        if headers.get(name):
            return name
    return None


@dataclass(frozen=True)
class RecordedRequest:
    """One request as the emulator received it.

    ``headers`` have lower-case names and no credential headers; ``auth`` says which
    kind of credential was sent (see :func:`auth_scheme`). ``body`` is the parsed JSON
    body (``None`` when empty or not JSON). ``api`` is the wire API that served it, or
    ``None`` for an unknown route.
    """

    api: str | None
    method: str
    path: str
    query: Mapping[str, str] = field(default_factory=dict[str, str])
    headers: Mapping[str, str] = field(default_factory=dict[str, str])
    body: Any = None
    auth: str | None = None


class Recorder:
    """A thread-safe log of the last ``max_items`` :class:`RecordedRequest` (older ones
    are forgotten, so a long-running emulator does not grow without bound)."""

    def __init__(self, max_items: int = MAX_RECORDED) -> None:
        if max_items < 1:
            raise ValueError("max_items must be at least 1")
        self._lock = threading.Lock()
        self._items: deque[RecordedRequest] = deque(maxlen=max_items)

    def add(
        self,
        api: str | None,
        method: str,
        path: str,
        query: Iterable[tuple[str, str]],
        headers: Iterable[tuple[str, str]],
        body: Any,
    ) -> RecordedRequest:
        """Record a request; credentials in ``headers`` and ``query`` are dropped."""
        all_headers = {k.lower(): v for k, v in headers}
        clean_headers = {k: v for k, v in all_headers.items() if k not in CREDENTIAL_HEADERS}
        clean_query = {k: v for k, v in query if k.lower() not in CREDENTIAL_QUERY}
        item = RecordedRequest(
            api, method, path, clean_query, clean_headers, body, auth_scheme(all_headers)
        )
        with self._lock:
            self._items.append(item)
        return item

    def snapshot(self) -> list[RecordedRequest]:
        """A copy of the recorded requests (the last ``max_items``), oldest first."""
        with self._lock:
            return list(self._items)

    def clear(self) -> None:
        """Forget every recorded request."""
        with self._lock:
            self._items.clear()
