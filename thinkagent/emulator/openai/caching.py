"""Automatic prompt caching on the OpenAI wires, as OpenAI and DeepSeek report it.

OpenAI caches every prompt of 1,024 tokens or more by itself, and a later request that starts
with the same bytes (tools and structured-output schema, then the messages or input items in
order) reads the longest such prefix, reported in 128-token steps as
``prompt_tokens_details.cached_tokens`` (Chat Completions) or
``input_tokens_details.cached_tokens`` (Responses) (developers.openai.com/docs/guides/
prompt-caching). Caches are per organization (here: per credential) and model;
``prompt_cache_key`` joins the prefix in routing requests, so requests with another key do not
share a cache here. Entries live 10 minutes after their last use (OpenAI: "5 to 10 minutes of
inactivity"), a day with ``prompt_cache_retention: "24h"``.

DeepSeek caches prefixes on disk in 64-token units and reports ``prompt_cache_hit_tokens`` and
``prompt_cache_miss_tokens`` (api-docs.deepseek.com/guides/kv_cache), with the same figure in
``prompt_tokens_details.cached_tokens``. Other compatible hosts report no cache here.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..caching import CacheRules, PrefixCache, segment
from .rules import OpenAIProfile, invalid_value

__all__ = ["AutomaticCache", "cache_rules"]

_RETENTION: Mapping[str, float] = {"in_memory": 600.0, "24h": 86_400.0}


@dataclass(frozen=True)
class _Rules:
    minimum: int
    step: int


_FAMILIES: Mapping[str, _Rules] = {
    "openai": _Rules(minimum=1024, step=128),
    "deepseek": _Rules(minimum=64, step=64),
}


def cache_rules(model: OpenAIProfile) -> _Rules | None:
    """The caching rules of a model's host (None: the host reports no caching)."""
    return _FAMILIES.get(model.family)


class AutomaticCache:
    """One wire's prompt cache: the prefixes of its requests, per credential, model and
    cache key."""

    def __init__(self) -> None:
        self._cache = PrefixCache()

    def clear(self) -> None:
        self._cache.clear()

    def read(
        self,
        *,
        model: OpenAIProfile,
        model_name: str,
        credential: str,
        body: Mapping[str, Any],
        head: Mapping[str, Any],
        items: Sequence[Mapping[str, Any]],
        totals: Sequence[int],
    ) -> int:
        """The tokens of this request read from the cache (0 where the host reports none),
        after keeping its prefixes for later requests. ``head`` is what comes before the
        ``items`` (the messages, or the input items) in the prompt; ``totals[k]`` the input
        tokens of the head and the first ``k`` items, as the brain counts them."""
        rules = cache_rules(model)
        retention = body.get("prompt_cache_retention")
        if retention is not None and retention not in _RETENTION:
            raise invalid_value(retention, tuple(_RETENTION), "prompt_cache_retention")
        if rules is None:
            return 0
        key = body.get("prompt_cache_key")
        account = hashlib.sha256(credential.encode()).hexdigest()[:16]
        namespace = (account, model_name, key if isinstance(key, str) else None)
        segments = [segment(dict(head), totals[0])]
        segments += [segment(dict(item), totals[k + 1] - totals[k]) for k, item in enumerate(items)]
        ttl = _RETENTION[retention if isinstance(retention, str) else "in_memory"]
        read = self._cache.use(namespace, segments, CacheRules(rules.minimum, ttl)).read_tokens
        return read - read % rules.step
