"""The request log keeps a resent history once: each request of a conversation sends every earlier
message again, and a log holding a copy of each would grow with the square of the conversation's
length (gigabytes for a few conversations of 1,000 messages). Equal items are shared between
recorded bodies, and forgotten with the last request that holds them."""

from __future__ import annotations

from typing import Any

from thinkagent.emulator import Emulator
from thinkagent.emulator.recording import Recorder


def _shared(recorder: Recorder) -> int:
    """How many distinct list items the log holds."""
    return len(recorder._shared)  # pyright: ignore[reportPrivateUsage]


def _conversation(turns: int) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    for turn in range(turns):
        messages.append({"role": "user", "content": [{"type": "text", "text": f"Question {turn}"}]})
        messages.append({"role": "assistant", "content": f"Answer {turn}"})
    return messages


def record(recorder: Recorder, body: Any) -> Any:
    return recorder.add("anthropic", "POST", "/v1/messages", [], [("x-api-key", "k")], body)


def test_a_resent_history_is_recorded_once() -> None:
    recorder = Recorder()
    history = _conversation(50)
    sent = [
        {"model": "m", "messages": history[: 2 * n + 1], "tools": [{"name": "t"}], "stream": False}
        for n in range(50)
    ]
    for body in sent:
        record(recorder, body)
    recorded = [r.body for r in recorder.snapshot()]
    assert recorded == sent
    assert [list(b) for b in recorded] == [list(b) for b in sent]  # the keys in their order
    assert recorded[-1]["messages"][0] is recorded[0]["messages"][0]
    assert recorded[-1]["tools"][0] is recorded[0]["tools"][0]
    assert _shared(recorder) == 99 + 1  # the messages sent, and the tool, once each


def test_only_the_same_json_is_shared() -> None:
    recorder = Recorder()
    bodies = [
        {"messages": [{"a": 1, "b": 2}, 1, True, "x"]},
        {"messages": [{"b": 2, "a": 1}, 1.0, 1, "x"]},
    ]
    for body in bodies:
        record(recorder, body)
    first, second = (r.body["messages"] for r in recorder.snapshot())
    assert list(second[0]) == ["b", "a"]
    assert second[0] is not first[0]
    assert type(second[1]) is float and second[2] is not True
    assert _shared(recorder) == 6


def test_forgotten_requests_release_what_they_shared() -> None:
    recorder = Recorder(max_items=2)
    history = _conversation(3)
    for n in range(1, 7):
        record(recorder, {"messages": history[:n]})
    assert [len(r.body["messages"]) for r in recorder.snapshot()] == [5, 6]
    assert _shared(recorder) == 6
    record(recorder, {"messages": [{"role": "user", "content": "new"}]})
    record(recorder, {"messages": [{"role": "user", "content": "new"}]})
    assert _shared(recorder) == 1
    recorder.clear()
    assert _shared(recorder) == 0 and recorder.snapshot() == []


async def test_requests_of_one_conversation_share_their_history(emu: Emulator) -> None:
    client = emu.openai_client()
    messages: list[Any] = [{"role": "user", "content": "What's the weather in Paris?"}]
    for _ in range(3):
        reply = await client.chat.completions.create(model="gpt-5", messages=messages)
        messages += [
            {"role": "assistant", "content": reply.choices[0].message.content},
            {"role": "user", "content": "And tomorrow?"},
        ]
    first, *_, last = (r.body for r in emu.requests)
    assert last["messages"] == messages[:-2] and first["messages"] == messages[:1]
    assert last["messages"][0] is first["messages"][0]
