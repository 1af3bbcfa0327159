"""`GeminiInteractionsModel` at the cost of a request's new messages: the SDK's interactions
client used without building a pydantic model per call, and the steps' pass resumed after the
prefix kept before the current turn (`PerPrefix`), sending the same bytes as a fresh history."""

from __future__ import annotations

import gc
import weakref
from collections.abc import AsyncIterator
from typing import Any

import httpx2
import pytest
from google import genai
from google.genai import types

from thinkagent import Message, SystemNote, TextPart, ThinkingBlock, ToolCall, ToolResult
from thinkagent.emulator import Emulator
from thinkagent.providers.base import ModelRequest
from thinkagent.providers.gemini import GeminiInteractionsModel

G3 = "gemini-3-pro-preview"
SCOPE = "gemini-interactions"


@pytest.fixture
async def sent(emu: Emulator) -> AsyncIterator[tuple[genai.Client, list[bytes]]]:
    """The emulator's client, and the bodies its HTTP client sends."""
    bodies: list[bytes] = []

    async def hook(request: Any) -> None:
        bodies.append(bytes(request.content))

    http = httpx2.AsyncClient(event_hooks={"request": [hook]})
    client = emu.gemini_client(
        http_options=types.HttpOptions(
            httpx_async_client=http, retry_options=types.HttpRetryOptions(attempts=1)
        )
    )
    yield client, bodies
    await http.aclose()


def loop(n: int, scope: str = SCOPE) -> list[Message]:
    """`n` question / signed call / result / answer loops (no signature the emulator checks:
    what is compared is what is sent, built the same way twice)."""
    out: list[Message] = []
    for k in range(n):
        out += [
            Message.user(f"question {k}"),
            Message(
                role="assistant",
                parts=(
                    ThinkingBlock.signed(f"why {k}", "c2lnbmF0dXJl"),
                    ToolCall(id=f"call-{k}", name="f", arguments={"k": k}),
                ),
                scope=scope,
                model=G3,
            ),
            Message.user_results([ToolResult(call_id=f"call-{k}", name="f", content="ok")]),
            Message(role="assistant", parts=(TextPart(text=f"answer {k}"),), scope=scope, model=G3),
        ]
    return out


def steps(model: GeminiInteractionsModel, messages: list[Message]) -> tuple[Any, str]:
    """The steps and their JSON text (its pieces joined)."""
    sent, pieces = model._encoded_steps(messages, 0, wire=True)  # pyright: ignore[reportPrivateUsage]
    return sent, "".join(pieces)


def fresh(messages: list[Message]) -> list[Message]:
    """The same history, never seen by any model (each message copied)."""
    return [m.model_copy() for m in messages]


def test_a_resumed_history_sends_what_a_fresh_copy_sends() -> None:
    model = GeminiInteractionsModel(G3, client=genai.Client(api_key="k"))
    history = [*loop(3), Message.user("now")]
    first = steps(model, history)
    kept = model._per_prefix.resume(history, ("interactions-pass", True))  # pyright: ignore[reportPrivateUsage]
    assert kept[0] == 12  # up to the current turn
    extended = [
        *history,
        Message(role="assistant", parts=(ToolCall(id="x", name="f", arguments={}),), scope=SCOPE),
        Message.user_results([ToolResult(call_id="x", name="f", content="done")]),
    ]
    assert steps(model, extended) == steps(model, fresh(extended))
    assert steps(model, history) == first == steps(model, fresh(history))


def test_a_foreign_call_after_the_kept_prefix_still_gets_its_dummy_thought() -> None:
    model = GeminiInteractionsModel(G3, client=genai.Client(api_key="k"))
    history = [*loop(2), Message.user("go on")]
    steps(model, history)
    foreign = Message(
        role="assistant", parts=(ToolCall(id="y", name="f", arguments={}),), scope="anthropic"
    )
    extended = [*history, foreign, Message.user_results([ToolResult(call_id="y", name="f")])]
    resumed, text = steps(model, extended)
    assert (resumed, text) == steps(model, fresh(extended))
    assert [s["type"] for s in resumed[-3:]] == ["thought", "function_call", "function_result"]


def test_a_branch_or_an_edited_message_is_passed_over_again() -> None:
    model = GeminiInteractionsModel(G3, client=genai.Client(api_key="k"))
    history = [*loop(3), Message.user("now")]
    steps(model, history)
    edited = [*history[:5], Message.user("another question"), *history[6:]]
    branch = [*history[:8], Message.user("elsewhere")]
    for other in (edited, branch):
        assert steps(model, other) == steps(model, fresh(other))


def test_a_turn_scoped_note_is_left_out_once_its_turn_is_over() -> None:
    """The state depends on where the current turn starts: a note shown in its turn is left
    out of the next, though its message was passed over before."""
    model = GeminiInteractionsModel(G3, client=genai.Client(api_key="k"))
    note = SystemNote(text="be brief", clear_at="next_user_message")
    history = [*loop(1), Message(role="user", parts=(TextPart(text="q"), note))]
    assert "be brief" in steps(model, history)[1]
    later = [
        *history,
        Message(role="assistant", parts=(TextPart(text="ok"),), scope=SCOPE, model=G3),
        Message.user("next"),
    ]
    resumed = steps(model, later)
    assert "be brief" not in resumed[1]
    assert resumed == steps(model, fresh(later))


def test_typed_and_wire_steps_are_kept_apart() -> None:
    model = GeminiInteractionsModel(G3, client=genai.Client(api_key="k"))
    history = [*loop(2), Message.user("now")]
    steps(model, history)
    assert model.build_messages(history) == model.build_messages(fresh(history))


def test_nothing_of_a_dropped_conversation_is_kept() -> None:
    model = GeminiInteractionsModel(G3, client=genai.Client(api_key="k"))
    history = [*loop(3), Message.user("now")]
    steps(model, history)
    first = weakref.ref(history[0])
    del history
    gc.collect()
    assert first() is None
    assert len(model._per_message) == 0  # pyright: ignore[reportPrivateUsage]


async def test_a_request_builds_no_pydantic_model(
    sent: tuple[genai.Client, list[bytes]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The SDK's interactions client built a wrapper model (`pydantic.create_model`) to
    validate, write and read every call, a few milliseconds each whatever the history."""
    from google.genai._gaos.utils import serializers  # pyright: ignore[reportPrivateImportUsage]

    client, _ = sent
    model = GeminiInteractionsModel(G3, client=client)
    await model.request(ModelRequest(messages=[Message.user("warm up")]))
    built: list[object] = []
    original = serializers.create_model  # pyright: ignore[reportPrivateImportUsage]

    def counted(*args: Any, **kwargs: Any) -> Any:
        built.append(args)
        return original(*args, **kwargs)

    monkeypatch.setattr(serializers, "create_model", counted)
    response = await model.request(ModelRequest(messages=[Message.user("hello")]))
    assert response.message.parts and not built


async def test_resumed_requests_send_the_bytes_of_a_fresh_history(
    sent: tuple[genai.Client, list[bytes]],
) -> None:
    client, bodies = sent
    model = GeminiInteractionsModel(G3, client=client)
    history: list[Message] = []
    for prompt in ("one", "two", "three"):
        history = [*history, Message.user(prompt)]
        response = await model.request(ModelRequest(messages=history))
        history = [*history, response.message]
    history = [*history, Message.user("four")]
    await model.request(ModelRequest(messages=history))
    resumed = bodies[-1]
    await GeminiInteractionsModel(G3, client=client).request(ModelRequest(messages=fresh(history)))
    assert bodies[-1] == resumed


async def test_a_body_the_models_refuse_is_read_by_the_sdk(emu: Emulator) -> None:
    """A 200 body the response model refuses goes to the SDK's own (lenient) reading."""

    def handler(request: httpx2.Request) -> httpx2.Response:
        body = {"id": "i", "status": "completed", "steps": [], "created": "not a date"}
        return httpx2.Response(200, json=body)

    http = httpx2.AsyncClient(transport=httpx2.MockTransport(handler))
    client = genai.Client(
        api_key="k",
        http_options=types.HttpOptions(
            base_url="http://localhost:1",
            httpx_async_client=http,
            retry_options=types.HttpRetryOptions(attempts=1),
        ),
    )
    model = GeminiInteractionsModel(G3, client=client)
    response = await model.request(ModelRequest(messages=[Message.user("hi")]))
    assert response.message.id == "i"
