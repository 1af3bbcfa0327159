"""A user's `SystemNote` on every wire, through the official SDKs against the emulator.

Defect (issue 22's gap): every adapter but Claude's left `SystemNote` parts out of the request
without a word, so `agent.run(["question", SystemNote(text=...)])` lost the user's instruction
on OpenAI, Gemini and Bedrock's other families. Each wire now sends it its own way: a
`developer`/`system` message in place where the API has one after the first turn (Chat
Completions on OpenAI's endpoints, the Responses API), else the user's text, tagged, with a
`system_note_as_text` warning. What only Claude understands is honoured or refused: a
turn-scoped note is shown for its turn only, the agent's instruction records are left out (the
request sends its instructions whole), and tool changes the request's tools do not match are a
`HistoryError` before anything is sent.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

import pytest

from tests.conftest import needs_genai
from thinkagent import (
    Agent,
    FallbackModel,
    HistoryError,
    Message,
    ProviderError,
    SystemNote,
    TextPart,
)
from thinkagent.emulator import Emulator, Fault
from thinkagent.providers.anthropic import AnthropicModel
from thinkagent.providers.bedrock import BedrockModel
from thinkagent.providers.openai import (
    DIALECTS,
    BedrockMantleModel,
    OpenAIChatModel,
    OpenAIResponsesModel,
)
from thinkagent.testing import TestModel

PROMPT = "What's the weather in Paris?"
NOTE = "From now on, answer in one sentence."
TAGGED = f"<system_note>\n{NOTE}\n</system_note>"

streamed_or_not = pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])


def get_weather(city: str) -> str:
    """Current weather for a city."""
    return f"sunny in {city}, 21 C"


def get_time(city: str) -> str:
    """Local time in a city."""
    return f"14:05 in {city}"


async def run(agent: Agent, prompt: Any, history: list[Message], *, streamed: bool) -> Any:
    kw: dict[str, Any] = {"history": history} if history else {}
    if not streamed:
        return await agent.run(prompt, **kw)
    async with agent.run_stream(prompt, **kw) as events:
        async for _ in events:
            pass
    return events.result


# --- each wire's conversation as (role, text) entries, one per part ---------------------------


def _text(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content]
    parts: list[dict[str, Any]] = content or []
    return [p["text"] for p in parts if "text" in p]


def chat_view(body: dict[str, Any]) -> list[tuple[str, str]]:
    return [(m["role"], t) for m in body["messages"] for t in _text(m.get("content"))]


def responses_view(body: dict[str, Any]) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for item in body["input"]:
        if item.get("type", "message") == "message":
            content = item["content"]
            texts = [content] if isinstance(content, str) else [p["text"] for p in content]
            out += [(item["role"], t) for t in texts]
        elif item["type"] == "function_call_output":
            out.append(("result", item["call_id"]))
    return out


def gemini_view(body: dict[str, Any]) -> list[tuple[str, str]]:
    return [
        (c.get("role", "user"), p["text"] if "text" in p else next(iter(p)))
        for c in body["contents"]
        for p in c["parts"]
        if not p.get("thought")
    ]


def interactions_view(body: dict[str, Any]) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for step in body["input"]:
        if step["type"] == "user_input":
            out += [("user", b["text"]) for b in step["content"] if b["type"] == "text"]
        elif step["type"] != "thought":
            out.append((step["type"], ""))
    return out


def converse_view(body: dict[str, Any]) -> list[tuple[str, str]]:
    return [
        (m["role"], b["text"] if "text" in b else next(iter(b)))
        for m in body["messages"]
        for b in m["content"]
        if "reasoningContent" not in b
    ]


class Clients:
    """Makes the emulator's clients for a test (`clients("openai", base_url=...)`) and closes
    them after it."""

    def __init__(self, emu: Emulator) -> None:
        self.emu = emu
        self.made: list[Any] = []

    def __call__(self, kind: str, **kwargs: Any) -> Any:
        self.made.append(getattr(self.emu, f"{kind}_client")(**kwargs))
        return self.made[-1]

    async def close(self) -> None:
        for client in self.made:
            if hasattr(client, "aio"):
                await client.aio.aclose()
            elif inspect.iscoroutinefunction(client.close):
                await client.close()
            else:
                client.close()


@pytest.fixture
async def clients(emu: Emulator) -> AsyncIterator[Clients]:
    made = Clients(emu)
    yield made
    await made.close()


@dataclass(frozen=True)
class Wire:
    id: str
    make: Callable[[Clients], Any]
    api: str
    view: Callable[[dict[str, Any]], list[tuple[str, str]]]
    note_role: str | None  # the role a native note goes in; None: as the user's text
    genai: bool = False
    joined: bool = False  # as text, in the prompt's own string (Chat: text-only content)


def _chat(name: str, dialect: str, route: str | None = None) -> Callable[[Clients], Any]:
    def make(clients: Clients) -> Any:
        if route is None:
            return OpenAIChatModel(name, client=clients("openai"), dialect=dialect)
        base = f"{clients.emu.url}/{route}/v1"
        return OpenAIChatModel(name, client=clients("openai", base_url=base), dialect=dialect)

    return make


def _gemini(clients: Clients) -> Any:
    from thinkagent.providers.gemini import GeminiModel

    return GeminiModel("gemini-2.5-flash", client=clients("gemini"))


def _vertex(clients: Clients) -> Any:
    from thinkagent.providers.gemini import GeminiModel

    return GeminiModel("gemini-2.5-flash", client=clients("vertex"))


def _interactions(clients: Clients) -> Any:
    from thinkagent.providers.gemini import GeminiInteractionsModel

    return GeminiInteractionsModel("gemini-3-pro-preview", client=clients("gemini"))


WIRES = [
    Wire("chat-openai-gpt-5", _chat("gpt-5", "openai"), "openai", chat_view, "developer"),
    Wire("chat-openai-gpt-4.1", _chat("gpt-4.1", "openai"), "openai", chat_view, "system"),
    Wire(
        "chat-azure",
        lambda c: OpenAIChatModel("my-o4-mini", client=c("azure")),
        "openai",
        chat_view,
        "system",
    ),
    Wire(
        "chat-deepseek",
        _chat("deepseek-reasoner", "deepseek"),
        "openai",
        chat_view,
        None,
        joined=True,
    ),
    Wire(
        "chat-mistral",
        _chat("magistral-medium-latest", "mistral"),
        "openai",
        chat_view,
        None,
        joined=True,
    ),
    Wire(
        "chat-vllm", _chat("Qwen/Qwen3-8B", "vllm", "vllm"), "openai", chat_view, None, joined=True
    ),
    Wire(
        "chat-gemini-openai",
        lambda c: OpenAIChatModel(
            "gemini-2.5-flash",
            client=c("openai", base_url=f"{c.emu.url}/v1beta/openai/"),
            dialect="gemini",
        ),
        "openai",
        chat_view,
        None,
        joined=True,
    ),
    Wire(
        "responses",
        lambda c: OpenAIResponsesModel("gpt-5", client=c("openai")),
        "openai-responses",
        responses_view,
        "developer",
    ),
    Wire(
        "responses-mantle",
        lambda c: BedrockMantleModel("openai.gpt-oss-120b", client=c("mantle"), region="us-east-1"),
        "openai-responses",
        responses_view,
        "developer",
    ),
    Wire("gemini", _gemini, "gemini", gemini_view, None, genai=True),
    Wire("vertex", _vertex, "vertex", gemini_view, None, genai=True),
    Wire(
        "gemini-interactions",
        _interactions,
        "gemini-interactions",
        interactions_view,
        None,
        genai=True,
    ),
    Wire(
        "bedrock-gpt-oss",
        lambda c: BedrockModel("openai.gpt-oss-120b-1:0", client=c("bedrock")),
        "bedrock",
        converse_view,
        None,
    ),
]

INTERACTIONS = next(w for w in WIRES if w.id == "gemini-interactions")

wires = pytest.mark.parametrize(
    "wire",
    [pytest.param(w, id=w.id, marks=[needs_genai] if w.genai else []) for w in WIRES],
)


def sent(emu: Emulator, wire: Wire) -> list[dict[str, Any]]:
    return [r.body for r in emu.requests if r.api == wire.api and r.method == "POST"]


@wires
@streamed_or_not
async def test_a_users_note_reaches_every_wire_in_its_own_shape_and_place(
    wire: Wire, streamed: bool, emu: Emulator, clients: Clients
) -> None:
    """Fails on the code before: the note was missing from every request of these wires."""
    agent = Agent(wire.make(clients), tools=[get_weather], instructions="Be brief.")
    note = SystemNote(text=NOTE)
    result = await run(agent, [PROMPT, note], [], streamed=streamed)
    bodies = sent(emu, wire)
    assert len(bodies) == 2  # the call, then the answer: the note goes with both
    for body in bodies:
        view = wire.view(body)
        if wire.joined:
            assert ("user", f"{PROMPT}\n\n{TAGGED}") in view
        else:
            prompt = view.index(("user", PROMPT))
            expected = (wire.note_role, NOTE) if wire.note_role else ("user", TAGGED)
            assert view[prompt + 1] == expected
        assert sum(NOTE in text for _, text in view) == 1, view  # once, not in its reasoning
    assert result.new_messages[0].parts == (TextPart(text=PROMPT), note)  # kept as it was
    as_text = ["system_note_as_text"] * (0 if wire.note_role else 2)
    assert [w.code for w in result.warnings] == as_text
    if as_text:
        assert "messages[0]" in result.warnings[0].message


@pytest.mark.parametrize(
    "wire",
    [
        pytest.param(w, id=w.id, marks=[needs_genai] if w.genai else [])
        for w in WIRES
        if w.id in ("chat-openai-gpt-5", "responses", "gemini", "bedrock-gpt-oss")
    ],
)
async def test_a_turn_scoped_note_is_shown_for_its_turn_only(
    wire: Wire, emu: Emulator, clients: Clients
) -> None:
    agent = Agent(wire.make(clients), tools=[get_weather])
    note = SystemNote(text=NOTE, clear_at="next_user_message")
    first = await agent.run([PROMPT, note])

    def shown(body: dict[str, Any]) -> bool:  # the note itself (earlier reasoning may quote it)
        return any(NOTE in text for _, text in wire.view(body))

    assert len(sent(emu, wire)) == 2 and all(map(shown, sent(emu, wire)))  # its tool loop too
    emu.clear()
    second = await agent.run("And in Rome?", history=first.messages)
    assert sent(emu, wire) and not any(map(shown, sent(emu, wire)))
    assert second.warnings == []  # nothing went as text
    assert note in second.messages[0].parts  # the history keeps it


@needs_genai
async def test_a_stateful_interaction_goes_whole_once_a_turn_scoped_note_is_over(
    emu: Emulator, clients: Clients
) -> None:
    """Stored steps would show the note again: the next turn's request sends the whole history
    without it, and no `previous_interaction_id`."""
    from thinkagent.providers.gemini import GeminiInteractionsModel

    model = GeminiInteractionsModel("gemini-3-pro-preview", client=clients("gemini"), stateful=True)
    agent = Agent(model, tools=[get_weather])
    first = await agent.run([PROMPT, SystemNote(text=NOTE, clear_at="next_user_message")])
    bodies = sent(emu, INTERACTIONS)
    assert "previous_interaction_id" in bodies[-1]  # its tool loop continues what is stored
    emu.clear()
    second = await agent.run("And in Rome?", history=first.messages)
    body = sent(emu, INTERACTIONS)[0]
    assert "previous_interaction_id" not in body
    assert not any(NOTE in text for _, text in interactions_view(body))
    assert interactions_view(body)[0] == ("user", PROMPT)
    emu.clear()
    await agent.run("And in Oslo?", history=second.messages)
    assert "previous_interaction_id" not in sent(emu, INTERACTIONS)[0]  # from now on, whole


async def test_the_agents_instruction_notes_are_left_out_where_instructions_go_whole(
    emu: Emulator, openai_client: Any
) -> None:
    """A note marked `instructions` is the record Claude's conversations keep of the agent's
    instructions; a wire that sends the request's instructions whole sends them instead (a
    conversation that moved from Claude does not get every earlier version again)."""
    history = [
        Message(
            role="user",
            parts=(
                TextPart(text="Hello."),
                SystemNote(text="Today is Monday.", instructions=True),
            ),
        ),
        Message(role="assistant", parts=(TextPart(text="Hi."),), scope="anthropic"),
    ]
    for model in (
        OpenAIChatModel("gpt-5", client=openai_client),
        OpenAIChatModel("deepseek-reasoner", client=openai_client, dialect="deepseek"),
    ):
        emu.clear()
        result = await Agent(model, instructions="Today is Tuesday.").run(
            "What day is it?", history=history
        )
        body = emu.requests[-1].body
        assert "Monday" not in json.dumps(body) and "Tuesday" in json.dumps(body)
        assert result.warnings == []


@wires
async def test_a_note_that_removes_a_tool_the_run_still_offers_is_refused_before_sending(
    wire: Wire, emu: Emulator, clients: Clients
) -> None:
    agent = Agent(wire.make(clients), tools=[get_weather, get_time])
    note = SystemNote(text="No more clocks.", remove_tools=("get_time",))
    with pytest.raises(HistoryError, match="removes the tool 'get_time'") as caught:
        await agent.run([PROMPT, note])
    assert (caught.value.message_index, caught.value.part_index) == (0, 1)
    assert "no mid-conversation tool changes" in str(caught.value)
    assert sent(emu, wire) == []


async def test_a_note_that_adds_a_tool_the_run_does_not_offer_is_refused(
    emu: Emulator, openai_client: Any
) -> None:
    agent = Agent(OpenAIResponsesModel("gpt-5", client=openai_client), tools=[get_weather])
    with pytest.raises(HistoryError, match="adds the tool 'get_time'"):
        await agent.run([PROMPT, SystemNote(add_tools=("get_time",))])
    assert emu.requests == []


async def test_tool_changes_the_run_agrees_with_go_and_earlier_ones_are_history(
    emu: Emulator, openai_client: Any
) -> None:
    model = OpenAIChatModel("gpt-5", client=openai_client)
    withdrawn = SystemNote(text="No more clocks.", remove_tools=("get_time",))
    first = await Agent(model, tools=[get_weather]).run([PROMPT, withdrawn])
    assert chat_view(emu.requests[0].body)[:2] == [
        ("user", PROMPT),
        ("developer", "No more clocks."),
    ]
    # A later turn offers the tool again: the note is an earlier turn's, not refused.
    again = await Agent(model, tools=[get_weather, get_time]).run(
        "And the time?", history=first.messages
    )
    assert again.output


async def test_a_claude_model_without_system_messages_uses_the_same_rules(
    emu: Emulator, anthropic_client: Any
) -> None:
    """Claude's models without mid-conversation system messages share the rule: the agent's
    instruction records are left out, a turn-scoped note ends with its turn."""
    model = AnthropicModel("claude-sonnet-5", client=anthropic_client)
    history = [
        Message(
            role="user",
            parts=(
                TextPart(text="Hello."),
                SystemNote(text="Today is Monday.", instructions=True),
                SystemNote(text="Be terse this once.", clear_at="next_user_message"),
            ),
        ),
        Message(role="assistant", parts=(TextPart(text="Hi."),), scope="anthropic"),
    ]
    result = await Agent(model).run([PROMPT, SystemNote(text=NOTE)], history=history)
    body = json.dumps(emu.requests[-1].body)
    assert TAGGED.replace("\n", "\\n") in body
    assert "Monday" not in body and "Be terse" not in body
    assert [w.code for w in result.warnings] == ["system_note_as_text"]
    assert "messages[2]" in result.warnings[0].message


async def test_a_fallback_from_claude_keeps_the_users_note(
    emu: Emulator, anthropic_client: Any, openai_client: Any
) -> None:
    """`FallbackModel(Claude, OpenAI)`: the request Claude could not serve reaches OpenAI with
    the user's note in place."""
    emu.inject(Fault.http(529, api="anthropic"))
    model = FallbackModel(
        AnthropicModel("claude-opus-5-5", client=anthropic_client),
        OpenAIChatModel("gpt-5", client=openai_client),
    )
    result = await Agent(model).run([PROMPT, SystemNote(text=NOTE)])
    assert result.new_messages[-1].scope == "openai"
    body = next(r.body for r in emu.requests if r.api == "openai")
    assert chat_view(body)[-1] == ("developer", NOTE)


async def test_a_scripted_model_gets_the_note_as_it_was() -> None:
    """`TestModel` and `ScriptedModel` have no wire: the request they record holds the note."""
    model = TestModel()
    note = SystemNote(text=NOTE)
    await Agent(model).run([PROMPT, note])
    assert model.requests[0].messages[-1].parts[-1] == note


# --- the dialect's flag, and the hosts that refuse ---------------------------------------------


async def test_a_dialect_that_takes_system_messages_on_a_host_that_refuses_them_gets_its_refusal(
    openai_client: Any,
) -> None:
    """Why Mistral's dialect sends a note as text: its service refuses a system message after
    the conversation began (the emulator answers with Mistral's text)."""
    from dataclasses import replace

    dialect = replace(DIALECTS["mistral"], mid_conversation_system=True)
    model = OpenAIChatModel("magistral-medium-latest", client=openai_client, dialect=dialect)
    with pytest.raises(ProviderError, match="Unexpected role 'system' after role 'user'"):
        await Agent(model).run([PROMPT, SystemNote(text=NOTE)])


def test_the_dialect_flag_is_checked() -> None:
    from thinkagent import ConfigurationError
    from thinkagent.providers.openai import ChatDialect

    with pytest.raises(ConfigurationError, match="mid_conversation_system"):
        ChatDialect("mine", mid_conversation_system="yes")  # type: ignore[arg-type]
    assert DIALECTS["openai"].mid_conversation_system
    assert DIALECTS["azure"].mid_conversation_system
    assert not DIALECTS["compatible"].mid_conversation_system
