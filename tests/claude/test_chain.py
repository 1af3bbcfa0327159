"""The whole reasoning chain on today's Claude, once for both wires against the emulator:
instructions and tools that change between runs, appended as mid-conversation system messages
(`SystemNote`) instead of edited, so every earlier thinking block keeps verifying; the notes
persisted and sent again as they were; users' own notes; a model without them; and the bad
placements refused before sending."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.support.claude import ANTHROPIC, BEDROCK, Wire, run
from thinkagent import (
    Agent,
    HistoryError,
    Message,
    RunContext,
    SystemNote,
    TextPart,
    dump_messages,
    load_messages,
    validate_history,
)
from thinkagent.emulator import Emulator
from thinkagent.providers.claude import AnthropicModel

CITIES = ["Paris", "Rome", "Oslo", "Bern", "Lima", "Kyiv"]


def get_weather(city: str) -> str:
    """Current weather for a city."""
    return f"sunny in {city}, 21 C"


def get_news(city: str) -> str:
    """Headlines for a city."""
    return f"nothing new in {city}"


def opus(wire: Wire) -> str:
    return "claude-opus-5-5" if wire is ANTHROPIC else "anthropic.claude-opus-5-5-v1:0"


def dated() -> Any:
    day = {"n": 0}

    def instructions(ctx: RunContext[None]) -> str:
        day["n"] += 1
        return f"You are a weather assistant. Today is 2026-12-{day['n']:02d}."

    return instructions


def system_of(wire: Wire, body: dict[str, Any]) -> str:
    return json.dumps(body["system"], sort_keys=True)


def system_messages(body: dict[str, Any]) -> list[Any]:
    return [m for m in body["messages"] if m["role"] == "system"]


def proofs(messages: list[Message]) -> list[str]:
    return [b.signature or b.redacted or "" for m in messages for b in m.thinking]


@pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])
async def test_instructions_that_change_each_run_keep_every_block_verifying(
    wire: Wire, emu: Emulator, wire_client: Any, streamed: bool
) -> None:
    """Six runs, persisted and resumed, each with a new date in its instructions: every
    request keeps the first run's `system`, each change is one appended system message, and
    every earlier thinking block goes back on every request, with no warning."""
    instructions = dated()
    saved = ""
    for i, city in enumerate(CITIES):
        model = wire.model(wire_client, name=opus(wire))
        agent = Agent(model, tools=[get_weather], instructions=instructions)
        history = load_messages(saved) if saved else []
        before = len(wire.model_requests(emu))
        result = await run(
            agent, f"What's the weather in {city}?", history=history, streamed=streamed
        )
        assert result.warnings == []
        saved = dump_messages(result.messages)
        requests = wire.model_requests(emu)[before:]
        assert {system_of(wire, r.body) for r in requests} == {
            system_of(wire, wire.model_requests(emu)[0].body)
        }
        last = json.dumps(requests[-1].body)
        assert all(p in last for p in proofs(history))
        assert len(system_messages(requests[-1].body)) == i
        notes = [n for m in result.new_messages for n in (m.notes if m.role == "user" else [])]
        assert len(notes) == (1 if i else 0)
        if i:
            assert notes[0].instructions and f"2026-12-{i + 1:02d}" in notes[0].text
    final = load_messages(saved)
    validate_history(final)
    assert len([m for m in final if m.role == "user" and m.notes]) == 5


async def test_a_resumed_conversation_sends_its_notes_as_they_were(
    wire: Wire, emu: Emulator, wire_client: Any
) -> None:
    instructions = dated()
    history: list[Message] = []
    for city in CITIES[:2]:
        agent = Agent(
            wire.model(wire_client, name=opus(wire)), tools=[get_weather], instructions=instructions
        )
        history = (await agent.run(f"Weather in {city}?", history=history)).messages
    sent = system_messages(wire.model_requests(emu)[-1].body)
    emu.clear()
    resumed = load_messages(dump_messages(history))
    agent = Agent(
        wire.model(wire_client, name=opus(wire)),
        tools=[get_weather],
        instructions="You are a weather assistant. Today is 2026-12-02.",
    )
    result = await agent.run("And in Oslo?", history=resumed)
    assert result.warnings == []
    assert system_messages(wire.model_requests(emu)[0].body) == sent  # byte for byte
    assert not [n for m in result.new_messages for n in (m.notes if m.role == "user" else [])]


async def test_a_tool_added_on_turn_four_goes_by_reference_and_keeps_the_thinking(
    emu: Emulator, anthropic_client: Any
) -> None:
    wire = ANTHROPIC
    history: list[Message] = []
    for i, city in enumerate(CITIES):
        tools = [get_weather, get_news] if i >= 3 else [get_weather]
        prompt = f"What are the news in {city}?" if i == 3 else f"What's the weather in {city}?"
        agent = Agent(
            wire.model(anthropic_client, name=opus(wire)), tools=tools, instructions="Be brief."
        )
        before = len(wire.model_requests(emu))
        result = await agent.run(prompt, history=history)
        assert result.warnings == []
        body = wire.model_requests(emu)[-1].body
        assert all(p in json.dumps(body) for p in proofs(history))
        if i >= 3:
            assert [t["name"] for t in body["tools"]] == ["get_weather", "get_news"]
            assert body["tools"][1]["defer_loading"] is True
            assert "cache_control" in body["tools"][0] or isinstance(body["system"], list)
            note = system_messages(body)[0]["content"]
            assert note == [
                {"type": "tool_addition", "tool": {"type": "tool_reference", "name": "get_news"}}
            ]
            assert (
                "mid-conversation-tool-changes-2026-07-01"
                in wire.model_requests(emu)[before].headers["anthropic-beta"]
            )
        else:
            assert [t["name"] for t in body["tools"]] == ["get_weather"]
        if i == 3:
            assert any(c.name == "get_news" for m in result.new_messages for c in m.tool_calls)
        history = result.messages
    tools = {json.dumps(r.body["tools"][0], sort_keys=True) for r in wire.model_requests(emu)}
    assert len(tools) == 1  # the first tool's bytes never changed


async def test_a_tool_removed_is_appended_and_its_declaration_stays(
    wire: Wire, emu: Emulator, wire_client: Any
) -> None:
    history: list[Message] = []
    for i, city in enumerate(CITIES[:3]):
        tools = [get_weather] if i == 2 else [get_weather, get_news]
        agent = Agent(
            wire.model(wire_client, name=opus(wire)), tools=tools, instructions="Be brief."
        )
        result = await agent.run(f"What's the weather and news in {city}?", history=history)
        assert result.warnings == []
        history = result.messages
    requests = wire.model_requests(emu)
    key = "tools" if wire is ANTHROPIC else "toolConfig"
    assert len({json.dumps(r.body[key], sort_keys=True) for r in requests}) == 1
    notes = [n for m in history if m.role == "user" for n in m.notes]
    assert notes == [SystemNote(remove_tools=("get_news",))]
    last_run = result.new_messages
    assert not any(c.name == "get_news" for m in last_run for c in m.tool_calls)


async def test_a_model_without_system_messages_changes_its_system_as_before(
    wire: Wire, emu: Emulator, wire_client: Any
) -> None:
    """Claude Sonnet 5 takes no mid-conversation system message: the new instructions go as
    the top-level system (it does not bind thinking to it, so nothing is left out)."""
    name = "claude-sonnet-5" if wire is ANTHROPIC else "anthropic.claude-sonnet-5-v1:0"
    instructions = dated()
    history: list[Message] = []
    for city in CITIES[:3]:
        agent = Agent(
            wire.model(wire_client, name=name), tools=[get_weather], instructions=instructions
        )
        history = (await agent.run(f"Weather in {city}?", history=history)).messages
    requests = wire.model_requests(emu)
    assert len({system_of(wire, r.body) for r in requests}) == 3
    assert not any(system_messages(r.body) for r in requests)
    assert not [n for m in history if m.role == "user" for n in m.notes]


async def test_with_error_a_change_a_note_cannot_say_is_still_refused(
    emu: Emulator, anthropic_client: Any
) -> None:
    """Instructions removed (nothing to append): today's behaviour, `HistoryError` under
    `prefix_mismatch_behavior="error"`, before anything is sent."""
    from thinkagent.providers.claude import ClaudeThinking

    strict = ClaudeThinking.adaptive(prefix_mismatch_behavior="error")
    model = ANTHROPIC.model(anthropic_client, name="claude-opus-5-5", thinking=strict)
    history = (
        await Agent(model, tools=[get_weather], instructions="Be brief.").run("Weather in Rome?")
    ).messages
    emu.clear()
    with pytest.raises(HistoryError, match="bound to a different conversation"):
        await Agent(model, tools=[get_weather]).run("And Oslo?", history=history)
    assert emu.requests == []


# --- users' own notes -----------------------------------------------------------------------


async def test_a_users_note_goes_as_a_system_message_after_the_prompt(
    wire: Wire, emu: Emulator, wire_client: Any
) -> None:
    agent = Agent(
        wire.model(wire_client, name=opus(wire)), tools=[get_weather], instructions="Be brief."
    )
    first = await agent.run("What's the weather in Paris?")
    note = SystemNote(text="From now on, answer in French.")
    result = await agent.run(["And in Rome?", note], history=first.messages)
    assert result.warnings == []
    body = wire.model_requests(emu)[-1].body
    roles = [m["role"] for m in body["messages"]]
    assert roles[4:6] == ["user", "system"]
    text = body["messages"][5]["content"][0]
    assert text.get("text") == note.text
    assert result.new_messages[0].parts[-1] == note
    assert all(p in json.dumps(body) for p in proofs(first.messages))


async def test_a_turn_scoped_note_needs_its_beta_and_goes_only_to_the_claude_api(
    wire: Wire, emu: Emulator, wire_client: Any
) -> None:
    agent = Agent(wire.model(wire_client, name=opus(wire)), tools=[get_weather])
    first = await agent.run("What's the weather in Paris?")
    note = SystemNote(text="Answer in French this time.", clear_at="next_user_message")
    if wire is BEDROCK:
        emu.clear()
        with pytest.raises(HistoryError, match="clear_at") as caught:
            await agent.run(["And in Rome?", note], history=first.messages)
        assert (caught.value.message_index, caught.value.part_index) == (4, 1)
        assert emu.requests == []
        return
    result = await agent.run(["And in Rome?", note], history=first.messages)
    request = wire.model_requests(emu)[-1]
    assert system_messages(request.body)[0]["clear_at"] == "next_user_message"
    assert "mid-conversation-system-clear-at-2026-08-21" in request.headers["anthropic-beta"]
    # the next turn sends it again, as it was
    await agent.run("And in Oslo?", history=result.messages)
    assert system_messages(wire.model_requests(emu)[-1].body) == system_messages(request.body)


async def test_a_note_to_a_model_without_system_messages_goes_as_text_with_a_warning(
    wire: Wire, emu: Emulator, wire_client: Any
) -> None:
    name = "claude-sonnet-5" if wire is ANTHROPIC else "anthropic.claude-sonnet-5-v1:0"
    agent = Agent(wire.model(wire_client, name=name), tools=[get_weather])
    note = SystemNote(text="Answer in French.")
    result = await agent.run(["What's the weather in Paris?", note])
    assert [w.code for w in result.warnings] == ["system_note_as_text"] * len(
        [m for m in result.new_messages if m.role == "assistant"]
    )
    body = wire.model_requests(emu)[0].body
    assert not system_messages(body)
    assert "Answer in French." in json.dumps(body["messages"][0])
    assert result.new_messages[0].parts[-1] == note  # kept as it was


@pytest.mark.parametrize(
    ("history", "at", "why"),
    [
        (
            [
                Message.user("Hi"),
                Message(role="assistant", parts=(TextPart(text="Hello"), SystemNote(text="x"))),
            ],
            (1, 1),
            "a system note on an assistant message",
        ),
        (
            [Message(role="user", parts=(SystemNote(text="x"), TextPart(text="Hi")))],
            (0, 0),
            "nothing of the user's comes before",
        ),
        (
            [
                Message(
                    role="user",
                    parts=(TextPart(text="Hi"), SystemNote(text="x"), TextPart(text="More")),
                )
            ],
            (0, 2),
            "a system note ends its user turn",
        ),
        (
            [Message.user(["Hi", SystemNote(text="x")]), Message.user("More")],
            (1, 0),
            "a system note ends its user turn",
        ),
        (
            [
                Message.user("Hi"),
                Message(role="assistant", parts=(TextPart(text="Hello"),), scope="anthropic"),
                Message(role="user", parts=(SystemNote(text="x"),)),
            ],
            (2, 0),
            "nothing of the user's comes before",
        ),
    ],
    ids=["on-assistant", "first", "before-text", "before-a-user-message", "after-the-model"],
)
async def test_a_note_out_of_place_is_a_history_error_before_sending(
    emu: Emulator, anthropic_client: Any, history: list[Message], at: tuple[int, int], why: str
) -> None:
    agent = Agent(AnthropicModel("claude-opus-5-5", client=anthropic_client, scope="anthropic"))
    with pytest.raises(HistoryError, match=why) as caught:
        await agent.run(None, history=history)
    assert (caught.value.message_index, caught.value.part_index) == at
    assert emu.requests == []


async def test_a_prompt_of_notes_alone_or_with_text_after_them_is_refused(
    emu: Emulator, anthropic_client: Any
) -> None:
    agent = Agent(AnthropicModel("claude-opus-5-5", client=anthropic_client))
    with pytest.raises(HistoryError, match="a system note follows a prompt"):
        await agent.run([SystemNote(text="x")])
    with pytest.raises(HistoryError, match="goes last in the prompt") as caught:
        await agent.run([SystemNote(text="x"), "Hi"])
    assert caught.value.part_index == 1
    assert emu.requests == []


# --- a client-side fallback that sticks ------------------------------------------------------


@pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])
async def test_a_fallback_model_that_took_over_mid_loop_finishes_it(
    emu: Emulator, anthropic_client: Any, openai_client: Any, streamed: bool
) -> None:
    """Claude with a thinking budget is overloaded on its first request; DeepSeek answers and
    starts the tool loop; the loop's next request stays on DeepSeek (Claude would refuse a
    loop it did not begin with its own thinking), and the history replays to DeepSeek."""
    from thinkagent import FallbackModel
    from thinkagent.emulator import Fault
    from thinkagent.providers.claude import ClaudeThinking
    from thinkagent.providers.openai import OpenAIChatModel

    claude = AnthropicModel(
        "claude-sonnet-4-6", client=anthropic_client, thinking=ClaudeThinking.budget(2048)
    )
    other = OpenAIChatModel("deepseek-v4-flash", client=openai_client, dialect="deepseek")
    emu.inject(Fault.overloaded(api="anthropic"))
    agent = Agent(FallbackModel(claude, other), tools=[get_weather])
    result = await run(agent, "What's the weather in Paris?", streamed=streamed)
    assert "sunny in Paris" in result.output
    answered = [m.scope for m in result.new_messages if m.role == "assistant"]
    assert answered and all(s == other.scope for s in answered)
    assert len([r for r in emu.requests if r.api == "anthropic"]) == 1  # the 529 only
    more = await Agent(other, tools=[get_weather]).run("And in Rome?", history=result.messages)
    assert "sunny in Rome" in more.output
