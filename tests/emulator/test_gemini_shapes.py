"""The Gemini wires answer the real recorded Gemini 3 requests with responses of the same
keys and value types as the real ones, and treat the real signatures as foreign.

The recording in ``recorded/`` comes from the pydantic-ai project's test cassettes (MIT
licence, see ``recorded/LICENSE``): five turns of a Gemini 3 agent whose first turn makes
three parallel function calls, only the first signed, every signature replayed later."""

from __future__ import annotations

import copy
import http.client
import json
from typing import Any

import pytest

from tests.support import recorded
from thinkagent.emulator import Emulator

from .test_recorded_shapes import kind

SKIP_B64 = "c2tpcF90aG91Z2h0X3NpZ25hdHVyZV92YWxpZGF0b3I="
MODEL = "gemini-3-flash-preview"
PATHS = {
    "gemini": f"/v1beta/models/{MODEL}",
    "vertex": f"/v1beta1/projects/p/locations/global/publishers/google/models/{MODEL}",
}
HEADERS = {"gemini": {"x-goog-api-key": "k"}, "vertex": {"authorization": "Bearer t"}}


def interactions() -> list[dict[str, Any]]:
    return recorded.interactions("test_google_instructions_only_with_tool_calls.yaml")


def post(emu: Emulator, api: str, body: Any, method: str = "generateContent") -> tuple[int, Any]:
    connection = http.client.HTTPConnection("127.0.0.1", emu.port, timeout=10)
    query = "?alt=sse" if method == "streamGenerateContent" else ""
    connection.request(
        "POST",
        f"{PATHS[api]}:{method}{query}",
        body=json.dumps(body),
        headers={"content-type": "application/json", **HEADERS[api]},
    )
    response = connection.getresponse()
    raw = response.read()
    connection.close()
    if method == "streamGenerateContent" and response.status == 200:
        assert raw.endswith(b"\r\n\r\n")
        events = [e for e in raw.split(b"\r\n\r\n") if e]
        assert all(e.startswith(b"data: ") for e in events)
        return response.status, [json.loads(e[len(b"data: ") :]) for e in events]
    return response.status, json.loads(raw)


def assert_same_shape(real: Any, ours: Any, path: str = "$", *, exact: bool = True) -> None:
    """``ours`` has the keys (exactly the same keys when ``exact``) and value types of
    ``real``, recursively. A list element of ``real`` is matched with an element of
    ``ours`` that has the same keys (else more keys: a signed part for an unsigned one).
    Function-call arguments are only checked to be objects."""
    assert kind(ours) == kind(real), f"{path}: {kind(ours)} instead of {kind(real)}"
    if path.endswith(".functionCall.args"):
        return  # the arguments follow the called tool's schema
    if isinstance(real, dict):
        if exact:
            assert set(ours) == set(real), f"{path}: keys {sorted(ours)} != {sorted(real)}"
        for key, value in real.items():
            assert key in ours, f"{path}.{key} is missing"
            assert_same_shape(value, ours[key], f"{path}.{key}", exact=exact)
    elif isinstance(real, list):
        for index, item in enumerate(real):
            if not isinstance(item, dict):
                for other in ours:
                    assert kind(other) == kind(item), f"{path}[{index}]"
                continue
            keys = set(item)
            candidates = [o for o in ours if isinstance(o, dict) and set(o) == keys] or [
                o for o in ours if isinstance(o, dict) and set(o) > keys
            ]
            assert candidates, f"{path}[{index}]: no element with keys {sorted(keys)} in {ours}"
            assert_same_shape(
                item,
                candidates[0],
                f"{path}[{index}]",
                exact=not set(candidates[0]) > keys and exact,
            )


def without_signatures(body: dict[str, Any], value: str | None) -> dict[str, Any]:
    """``body`` with every replayed signature replaced by ``value`` (or dropped)."""
    out = copy.deepcopy(body)
    for content in out["contents"]:
        for part in content["parts"]:
            if "thoughtSignature" in part:
                if value is None:
                    del part["thoughtSignature"]
                else:
                    part["thoughtSignature"] = value
    return out


@pytest.mark.parametrize("api", ["gemini", "vertex"])
def test_first_turn_has_the_recorded_shape(emu: Emulator, api: str) -> None:
    recorded = interactions()
    status, ours = post(emu, api, recorded[0]["request"]["parsed_body"])
    assert status == 200, ours
    real = recorded[0]["response"]["parsed_body"]
    assert_same_shape(real, ours, exact=api == "gemini")
    parts = ours["candidates"][0]["content"]["parts"]
    calls = [p for p in parts if "functionCall" in p]
    assert calls[0]["functionCall"] == {"name": "generate_topic", "args": {}}
    assert "thoughtSignature" in calls[0]
    real_signature = real["candidates"][0]["content"]["parts"][0]["thoughtSignature"]
    assert calls[0]["thoughtSignature"][:1] == real_signature[:1] == "E"
    assert ours["modelVersion"] == real["modelVersion"] == MODEL
    assert ours["candidates"][0]["finishMessage"] == real["candidates"][0]["finishMessage"]
    if api == "vertex":
        assert {"createTime", "responseId"} <= set(ours)


@pytest.mark.parametrize("api", ["gemini", "vertex"])
def test_streamed_chunks_have_the_recorded_shape(emu: Emulator, api: str) -> None:
    recorded = interactions()
    status, chunks = post(
        emu, api, recorded[0]["request"]["parsed_body"], method="streamGenerateContent"
    )
    assert status == 200
    real = recorded[0]["response"]["parsed_body"]
    assert_same_shape(real, chunks[-1], exact=api == "gemini")
    for chunk in chunks[:-1]:
        assert set(chunk) <= set(chunks[-1])
        assert set(chunk["candidates"][0]) == {"content", "index"}


def test_follow_up_turns_have_the_recorded_shape(emu: Emulator) -> None:
    """The emulator's own model turns, replayed the way the recorded client replays them
    (with client-made call ids), get responses shaped like the real later turns."""
    recorded = interactions()
    first = recorded[0]["request"]["parsed_body"]
    status, ours = post(emu, "gemini", first)
    assert status == 200
    model_content = copy.deepcopy(ours["candidates"][0]["content"])
    responses: list[dict[str, Any]] = []
    for index, part in enumerate(model_content["parts"]):
        if "functionCall" in part:
            part["functionCall"]["id"] = f"pyd_ai_{index}"
            responses.append(
                {
                    "functionResponse": {
                        "id": f"pyd_ai_{index}",
                        "name": part["functionCall"]["name"],
                        "response": {"return_value": "cars"},
                    }
                }
            )
    body = {
        **first,
        "contents": [*first["contents"], model_content, {"parts": responses, "role": "user"}],
    }
    status, second = post(emu, "gemini", body)
    assert status == 200, second
    assert_same_shape(recorded[1]["response"]["parsed_body"], second)


def test_real_signatures_are_foreign_to_the_emulator(emu: Emulator) -> None:
    """The recorded later requests replay real signatures: valid for the real service,
    sealed with another key here, so refused as corrupted. With the documented dummy in
    their place the emulator accepts every recorded request."""
    recorded = interactions()
    for turn in recorded[1:]:
        body = turn["request"]["parsed_body"]
        status, error = post(emu, "gemini", body)
        assert status == 400
        assert error == {
            "error": {
                "code": 400,
                "message": "Corrupted thought signature.",
                "status": "INVALID_ARGUMENT",
            }
        }
        status, ours = post(emu, "gemini", without_signatures(body, SKIP_B64))
        assert status == 200, ours
        assert_same_shape(turn["response"]["parsed_body"], ours)
        status, error = post(emu, "gemini", without_signatures(body, None))
        assert status == 400
        assert error["error"]["message"].startswith(
            "Function call is missing a thought_signature in functionCall parts."
        )
