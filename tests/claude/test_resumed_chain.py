"""The prefix check resumed from what it kept for a conversation's earlier request
(`_ChainPass`) sends what a fresh adapter sends, where a left-out thinking turn merged the turns
around it."""

from __future__ import annotations

from thinkagent import Message, ModelRequest, TextPart, ThinkingBlock
from thinkagent.emulator import Emulator
from thinkagent.providers.claude import AnthropicModel, ClaudeThinking

MODEL = "claude-opus-5-5"


def model(emu: Emulator) -> AnthropicModel:
    return AnthropicModel(
        MODEL, client=emu.anthropic_client(max_retries=0), thinking=ClaudeThinking.adaptive()
    )


def test_turns_merged_around_left_out_thinking_are_merged_once(emu: Emulator) -> None:
    served = model(emu)
    asked = Message.user("What's the weather in Paris?")
    thought = Message(  # its recorded prefix is not this conversation's: left out, turn and all
        role="assistant",
        parts=(ThinkingBlock.signed("Paris, then.", "sig-paris"),),
        scope=served.scope,
        provider_details={"prefix_digests": ["not-this-prefix"]},
    )
    again = Message.user("And in Rome?")
    answer = Message(role="assistant", parts=(TextPart(text="Sunny."),), scope=served.scope)
    served.build_request(ModelRequest(messages=[asked, thought, again]))
    later = [asked, thought, again, answer, Message.user("And in Oslo?")]
    sent = served.build_request(ModelRequest(messages=later))
    fresh = model(emu).build_request(ModelRequest(messages=[m.model_copy() for m in later]))
    assert sent["messages"] == fresh["messages"]
    assert [m["role"] for m in sent["messages"]] == ["user", "assistant", "user"]


def test_the_next_run_from_the_same_history_sees_the_base_before_the_last_note() -> None:
    """What is in force before a run's prompt is kept for the next run from the same history:
    a note in the last run's prompt is not in force there."""
    from thinkagent import SystemNote
    from thinkagent.providers.claude._notes import recorded_base

    base = {"conversation": {"system": "Answer briefly.", "tools": []}}
    history = [
        Message.user("Paris?"),
        Message(
            role="assistant", parts=(TextPart(text="Sunny."),), scope="s", provider_details=base
        ),
    ]
    note = SystemNote(text="Answer in one word.", instructions=True)
    noted = Message(role="user", parts=(TextPart(text="Rome?"), note))
    first = recorded_base([*history, noted], {"s"})
    assert first is not None and first.instructions == "Answer in one word."
    again = recorded_base([*history, Message.user("Oslo?")], {"s"})
    assert again is not None and again.instructions == "Answer briefly."
