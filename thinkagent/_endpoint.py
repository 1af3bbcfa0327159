"""Where a model sends its requests: the host and port of its SDK client.

Read for traces (`server.address`, `server.port`) and by the switch that blocks real model
requests in tests (`thinkagent.testing.block_model_requests`). Found from the official clients
by their public shape (`base_url` on the Anthropic and OpenAI clients, `meta.endpoint_url` on
boto3's); google-genai keeps it in its API client's HTTP options. A model without a client (a
`ScriptedModel`, a `TestModel`, a user's own) has no endpoint.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

from .errors import ConfigurationError

__all__ = ["ModelRequestsBlocked", "blocked", "check", "endpoint", "endpoints"]

blocked = os.environ.get("THINKAGENT_BLOCK_MODEL_REQUESTS", "").strip().lower() in ("1", "true")
"""Whether runs are kept from reaching a model outside this machine (`block_model_requests`,
or `THINKAGENT_BLOCK_MODEL_REQUESTS=1` in the environment)."""

_DEFAULT_PORTS = {"https": 443, "http": 80}
_LOCAL = frozenset({"localhost", "127.0.0.1", "::1", "[::1]"})


class ModelRequestsBlocked(ConfigurationError):
    """A run would have sent a request to a real provider while model requests are blocked
    (`thinkagent.testing.block_model_requests`). Nothing was sent."""


def endpoint(model: object) -> tuple[str, int | None] | None:
    """`(host, port)` of the client `model` sends with, or None when it has none."""
    client: Any = getattr(model, "client", None)
    if client is None:
        return None
    url: Any = getattr(client, "base_url", None)
    if url is None:
        url = getattr(getattr(client, "meta", None), "endpoint_url", None)
    if url is None:
        options = getattr(getattr(client, "_api_client", None), "_http_options", None)
        url = getattr(options, "base_url", None)
    if url is None:
        return None
    parts = urlsplit(str(url))
    if not parts.hostname:
        return None
    try:
        port = parts.port or _DEFAULT_PORTS.get(parts.scheme)
    except ValueError:  # a port that is not a number: the host still says enough
        port = None
    return parts.hostname, port


def endpoints(model: object) -> Iterator[tuple[str, int | None]]:
    """The endpoints of `model` and of the models it wraps (a `FallbackModel`'s)."""
    found = endpoint(model)
    if found is not None:
        yield found
    for inner in getattr(model, "models", ()) or ():
        yield from endpoints(inner)


def check(model: object) -> None:
    """Raise `ModelRequestsBlocked` when requests are blocked and `model` (or a model it
    wraps) talks to a host other than this machine (the emulator is local)."""
    if not blocked:
        return
    for host, port in endpoints(model):
        if host.lower() not in _LOCAL and not host.startswith("127."):
            where = f"{host}:{port}" if port else host
            raise ModelRequestsBlocked(
                f"a real model request to {where} ({getattr(model, 'model_name', model)!r}) "
                "was blocked: model requests are blocked in tests "
                "(thinkagent.testing.block_model_requests). Give the run a TestModel or a "
                "ScriptedModel (agent.override(model=...)), or a client of the emulator; "
                "a test that must reach the provider can allow it with "
                "block_model_requests(False) or @pytest.mark.allow_model_requests"
            )
