"""Recording of every request the emulator receives, with credentials removed."""

from __future__ import annotations

import hashlib
import json
import threading
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, cast

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
    are forgotten, so a long-running emulator does not grow without bound).

    A conversation sends its whole history again with each request. An item of a body's
    top-level lists (``messages``, ``input``, ``contents``, ``tools``...) equal to one a recorded
    body already holds (the same JSON) is kept once and shared by both bodies, so the log grows
    with what each request adds, not with the length of its history: a recorded body is read,
    never changed."""

    def __init__(self, max_items: int = MAX_RECORDED) -> None:
        if max_items < 1:
            raise ValueError("max_items must be at least 1")
        self._lock = threading.Lock()
        self._max_items = max_items
        self._items: deque[tuple[RecordedRequest, list[_Shared]]] = deque()
        self._shared: dict[bytes, _Shared] = {}  # by the digest of the item's JSON

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
        lists = _digested_lists(body)
        with self._lock:
            held = {name: [self._share(*pair) for pair in pairs] for name, pairs in lists.items()}
            if held:
                body = {**body, **{name: [s.value for s in items] for name, items in held.items()}}
            item = RecordedRequest(
                api, method, path, clean_query, clean_headers, body, auth_scheme(all_headers)
            )
            self._items.append((item, [s for items in held.values() for s in items]))
            while len(self._items) > self._max_items:
                self._release(self._items.popleft()[1])
        return item

    def snapshot(self) -> list[RecordedRequest]:
        """A copy of the recorded requests (the last ``max_items``), oldest first."""
        with self._lock:
            return [item for item, _ in self._items]

    def clear(self) -> None:
        """Forget every recorded request."""
        with self._lock:
            self._items.clear()
            self._shared.clear()

    def _share(self, digest: bytes, value: Any) -> _Shared:
        shared = self._shared.get(digest)
        if shared is None:
            shared = self._shared[digest] = _Shared(digest, value)
        shared.holders += 1
        return shared

    def _release(self, held: Iterable[_Shared]) -> None:
        for shared in held:
            shared.holders -= 1
            if not shared.holders:
                del self._shared[shared.digest]


class _Shared:
    """An item recorded bodies share, and how many times they hold it."""

    __slots__ = ("digest", "holders", "value")

    def __init__(self, digest: bytes, value: Any) -> None:
        self.digest = digest
        self.value = value
        self.holders = 0


def _digested_lists(body: Any) -> dict[str, list[tuple[bytes, Any]]]:
    """The top-level lists of a JSON object ``body``, each item with a digest of its JSON
    (equal JSON, key order included, is the same value)."""
    if not isinstance(body, dict):
        return {}
    return {
        name: [(_digest(v), v) for v in cast("list[Any]", values)]
        for name, values in cast("dict[str, Any]", body).items()
        if isinstance(values, list)
    }


def _digest(value: Any) -> bytes:
    text = json.dumps(value, separators=(",", ":"))
    return hashlib.blake2b(text.encode(), digest_size=16).digest()
