"""`GeminiModel`'s replay resumes after the prefix a conversation's last request left final
(`PerPrefix`) and sends what a fresh copy of the history sends: the same contents, the same
warnings, wherever the current turn starts, however the history goes on (an extension, a
branch, an edited message, a call id a kept result answers), typed or as JSON data; and
nothing of a dropped conversation is kept."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Sequence
from typing import Any

from google import genai

from thinkagent import Message, SystemNote, TextPart, ThinkingBlock, ToolCall, ToolResult
from thinkagent.messages import ProviderDetails
from thinkagent.providers.base import ModelRequest, ToolDefinition
from thinkagent.providers.gemini import GeminiModel

SIGNATURE = "c2lnbmF0dXJl"  # base64 of b"signature"
TOOLS = (ToolDefinition(name="f", description="", parameters={"type": "object"}),)
GENERATED: ProviderDetails = {"generated_id": True}


def model(**options: Any) -> GeminiModel:
    client = genai.Client(api_key="test-key")  # nothing is sent: only the request is built
    return GeminiModel("gemini-3-pro-preview", client=client, **options)


def reply(k: int, *, scope: str = "gemini", generated: bool = False) -> Message:
    """A model turn that thinks (signed) and calls `f`; `generated`: the service gave the call
    no id."""
    return Message(
        role="assistant",
        parts=(
            ThinkingBlock.signed(f"why {k}", SIGNATURE),
            ToolCall(
                id=f"call-{k}",
                name="f",
                arguments={"k": k},
                signature=SIGNATURE if scope == "gemini" else None,
                provider_details=GENERATED if generated else None,
            ),
        ),
        scope=scope,
        model="gemini-3-pro-preview" if scope == "gemini" else "claude-sonnet-4-5",
    )


def results(k: int) -> Message:
    return Message.user_results([ToolResult(call_id=f"call-{k}", name="f", content=f"ok {k}")])


def answer(k: int) -> Message:
    return Message(
        role="assistant",
        parts=(TextPart(text=f"answer {k}"),),
        scope="gemini",
        model="gemini-3-pro-preview",
    )


def noted(k: int) -> Message:
    """A prompt ending with a note shown for its own turn only."""
    note = SystemNote(text=f"note {k}", clear_at="next_user_message")
    return Message(role="user", parts=(TextPart(text=f"question {k}"), note))


def conversation(turns: int) -> list[Message]:
    """Turns of prompt (some with a note), model call (some from elsewhere, some with a
    generated id), results, answer."""
    out: list[Message] = []
    for k in range(turns):
        out.append(noted(k) if k % 3 == 1 else Message.user(f"question {k}"))
        out.append(reply(k, scope="anthropic" if k % 4 == 2 else "gemini", generated=k % 2 == 0))
        out += [results(k), answer(k)]
    return out


def sent(model: GeminiModel, messages: Sequence[Message]) -> tuple[Any, Any, Any]:
    """What a request for `messages` sends: the contents (JSON data), their warnings, and the
    typed contents."""
    _, params, warnings = model._send(ModelRequest(messages=messages, tools=TOOLS))  # pyright: ignore[reportPrivateUsage]
    contents = params["config"]["http_options"].extra_body["contents"]
    typed = [c.model_dump(exclude_none=True) for c in model.build_messages(messages)]
    return contents, [(w.code, w.message) for w in warnings], typed


def fresh(messages: Sequence[Message]) -> list[Message]:
    """The same history, never sent: equal messages, none of them the same object."""
    return [m.model_copy() for m in messages]


def resumed_at(model: GeminiModel, messages: Sequence[Message]) -> int:
    return model._per_prefix.resume(messages, ("gemini-replay", True))[0]  # pyright: ignore[reportPrivateUsage]


def test_a_growing_conversation_sends_what_a_fresh_copy_sends() -> None:
    gemini = model()
    history = conversation(6)
    for n in range(1, len(history) + 1):
        assert sent(gemini, history[:n]) == sent(model(), fresh(history[:n])), n
    assert resumed_at(gemini, history) > 0  # the last requests resumed


def test_the_current_turn_moving_on_changes_what_the_prefix_sent() -> None:
    """A call from elsewhere gets the dummy signature while its turn is current, and a note
    shows while its turn is; once the next prompt comes both are history."""
    gemini = model()
    history = [Message.user("hi"), reply(0, scope="anthropic"), results(0)]
    history += [noted(1), reply(1, scope="anthropic"), results(1)]
    first = sent(gemini, history)
    assert first[0][3]["parts"][0]["thoughtSignature"]  # the dummy, on the current turn's call
    assert first[1]  # the note goes as text, with its warning
    later = [*history, answer(1), Message.user("next")]
    assert sent(gemini, later) == sent(model(), fresh(later))
    assert "thoughtSignature" not in sent(gemini, later)[0][3]["parts"][0]
    assert sent(gemini, later)[1] == []  # the note's turn is over


def test_a_branch_and_an_edited_message_send_what_a_fresh_copy_sends() -> None:
    gemini = model()
    history = conversation(4)
    sent(gemini, history)
    assert resumed_at(gemini, history) > 0
    branch = [*history[:9], Message.user("another way"), reply(9), results(9)]
    assert sent(gemini, branch) == sent(model(), fresh(branch))
    edited = [*history[:4], Message.user("edited"), *history[5:]]
    assert resumed_at(gemini, edited) == 0
    assert sent(gemini, edited) == sent(model(), fresh(edited))


def test_a_new_call_id_a_kept_result_answers_starts_again() -> None:
    """A kept result answered a call the service gave an id; a later call generated the same
    id: the kept result now answers a generated id, which goes without it, as from fresh."""
    gemini = model()
    history = [Message.user("hi"), reply(0), results(0), answer(0), Message.user("again")]
    sent(gemini, history)
    assert resumed_at(gemini, history) > 0
    later = [*history, reply(0, generated=True), results(0)]
    expected = sent(model(), fresh(later))
    assert "id" not in expected[0][2]["parts"][0]["functionResponse"]
    assert sent(gemini, later) == expected


def test_wire_and_typed_contents_are_kept_apart() -> None:
    gemini = model()
    history = conversation(3)
    typed = [c.model_dump(exclude_none=True) for c in gemini.build_messages(history)]
    assert sent(gemini, history)[2] == typed == sent(model(), fresh(history))[2]
    assert sent(gemini, history) == sent(model(), fresh(history))


def test_nothing_of_a_dropped_conversation_is_kept() -> None:
    gemini = model()
    history = conversation(3)
    sent(gemini, history)
    assert resumed_at(gemini, history) > 0
    first = weakref.ref(history[0])
    del history
    gc.collect()
    assert first() is None
    assert len(gemini._per_prefix._kept) == 0  # pyright: ignore[reportPrivateUsage]
