"""Prompt caching as the services report it: one store of request prefixes every wire can use.

A wire cuts its request into :class:`Segment` s in the order its service reads them (say the
tools and system instructions first, then each turn), each with its input tokens, and asks a
:class:`PrefixCache` what the request reads from the cache and what it writes to it, under its
provider's :class:`CacheRules`. The cache knows no wire format: what a segment's bytes are,
and where a provider lets a request mark the end of a cacheable prefix, is the wire's call.

- Automatic prefix caching (Gemini's implicit caching, OpenAI's prompt caching): every prefix
  of a request that is at least ``minimum_tokens`` long is kept; a later request that starts
  with one reads the longest such prefix (``PrefixCache.use(...)`` without ``breakpoints``).
- Explicit breakpoints (Anthropic's ``cache_control``, Bedrock's ``cachePoint``): only the
  prefixes that end at a breakpoint are written, each with its own lifetime
  (``breakpoints={segment index: ttl}``); the wire validates the breakpoints themselves (how
  many, and where they may sit) before it asks. A read looks for a stored prefix at each
  breakpoint and, with ``lookback``, at most that many segments back from it (Anthropic
  checks 20 blocks). The write is what the request adds beyond what it read, counted per
  lifetime (``CacheUse.writes``).

A prefix is identified by a chained digest of its segments' bytes, so two requests share a
cached prefix exactly when their first segments are byte for byte the same. An entry lives
``ttl`` seconds after it was last written or read. The store is bounded (the least recently
used entries go first) and thread-safe; ``clear()`` forgets everything (``Emulator.reset``).
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["CacheRules", "CacheUse", "PrefixCache", "Segment", "segment"]

#: Entries one :class:`PrefixCache` keeps at most (the least recently used go first).
MAX_ENTRIES = 50_000


@dataclass(frozen=True)
class Segment:
    """One piece of a request as the service reads it: its canonical bytes and its tokens."""

    content: bytes
    tokens: int


def segment(value: Any, tokens: int) -> Segment:
    """A :class:`Segment` for a parsed JSON value: its canonical JSON (sorted keys, no
    spaces), so only what the request says counts, not how its client spelled the JSON."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return Segment(text.encode("utf-8", "surrogatepass"), tokens)


@dataclass(frozen=True)
class CacheRules:
    """A provider's caching rules: the shortest prefix it caches (in tokens), and how long
    (seconds) an entry lives after its last use when the request does not say."""

    minimum_tokens: int
    ttl: float = 300.0


@dataclass(frozen=True)
class CacheUse:
    """What one request read from the cache and wrote to it, in tokens; ``writes`` splits the
    written tokens by the lifetime (seconds) of the breakpoint that wrote them, in order."""

    read_tokens: int = 0
    write_tokens: int = 0
    writes: tuple[tuple[float, int], ...] = ()


class PrefixCache:
    """The prefixes requests have left behind, per namespace (a wire keys it by model, and
    by account where its service does).

    ``clock`` returns seconds (``time.monotonic`` by default; tests pass their own).
    """

    def __init__(
        self, *, clock: Callable[[], float] = time.monotonic, max_entries: int = MAX_ENTRIES
    ) -> None:
        self._clock = clock
        self._max_entries = max_entries
        self._entries: OrderedDict[tuple[Hashable, bytes], tuple[float, float]] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._entries)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def use(
        self,
        namespace: Hashable,
        segments: Sequence[Segment],
        rules: CacheRules,
        *,
        breakpoints: Mapping[int, float | None] | None = None,
        lookback: int | None = None,
    ) -> CacheUse:
        """Read the longest cached prefix of ``segments`` and write this request's prefixes.

        Without ``breakpoints`` every prefix long enough is written (automatic caching); with
        them only the prefixes ending at those segment indexes, each living its given ttl
        (``None``: ``rules.ttl``), and, with ``lookback``, only the prefixes ending at a
        breakpoint or fewer than ``lookback`` segments before one are read. A prefix shorter
        than ``rules.minimum_tokens`` is neither read nor written.
        """
        keys, totals = _prefixes(segments)
        points = (
            {i: rules.ttl for i in range(len(keys))}
            if breakpoints is None
            else {
                i: rules.ttl if ttl is None else ttl
                for i, ttl in breakpoints.items()
                if 0 <= i < len(keys)
            }
        )
        readable = _readable(points, len(keys), None if breakpoints is None else lookback)
        now = self._clock()
        with self._lock:
            read = 0
            for i in range(len(keys) - 1, -1, -1):
                if totals[i] < rules.minimum_tokens:
                    break
                if readable is not None and i not in readable:
                    continue
                entry = self._entries.get((namespace, keys[i]))
                if entry is not None and entry[0] > now:
                    read = totals[i]
                    self._touch((namespace, keys[i]), now + entry[1], entry[1])
                    break
            written = read
            writes: list[tuple[float, int]] = []
            for i, ttl in sorted(points.items()):
                if totals[i] >= rules.minimum_tokens:
                    self._touch((namespace, keys[i]), now + ttl, ttl)
                    if totals[i] > written:
                        writes.append((ttl, totals[i] - written))
                        written = totals[i]
            self._evict()
        return CacheUse(read_tokens=read, write_tokens=written - read, writes=tuple(writes))

    def _touch(self, key: tuple[Hashable, bytes], expires: float, ttl: float) -> None:
        self._entries[key] = (expires, ttl)
        self._entries.move_to_end(key)

    def _evict(self) -> None:
        while len(self._entries) > self._max_entries:
            self._entries.popitem(last=False)


def _readable(points: Mapping[int, float], size: int, lookback: int | None) -> set[int] | None:
    """The prefix indexes a read may use: each breakpoint and the ``lookback - 1`` before it
    (None: any prefix)."""
    if lookback is None:
        return None
    return {j for i in points for j in range(max(0, i - lookback + 1), min(i + 1, size))}


def _prefixes(segments: Sequence[Segment]) -> tuple[list[bytes], list[int]]:
    """The chained digest and the total tokens of each prefix (the first ``i + 1`` segments)."""
    keys: list[bytes] = []
    totals: list[int] = []
    digest = b""
    total = 0
    for item in segments:
        digest = hashlib.sha256(digest + hashlib.sha256(item.content).digest()).digest()
        total += item.tokens
        keys.append(digest)
        totals.append(total)
    return keys, totals
