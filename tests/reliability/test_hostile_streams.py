"""What a hostile model or server returns (issue 21, defects 1 and 2), through the five wire
APIs against the emulator, streamed and not: tool arguments that are not a plain JSON object
become an error result the model can fix, with the arguments kept as evidence; a lone
surrogate in text, thinking or arguments never reaches a request or a persisted history."""

from __future__ import annotations

import pytest

from thinkagent import Agent, RunResult, ToolCall, dump_messages, load_messages, validate_history
from thinkagent.emulator import Emulator, Reply, ToolCallSpec

from ..conftest import HAS_GENAI
from .wires import EMULATOR_API, QUESTION, WIRES, Wire, get_weather, outcome, wire_model

#: The five wire APIs, and Gemini's Interactions API (where google-genai is installed).
ALL_WIRES: tuple[Wire, ...] = (*WIRES, *(("gemini-interactions",) if HAS_GENAI else ()))

BAD_ARGUMENTS = {
    "nan": {"city": float("nan")},
    "infinity": {"city": float("inf")},
    "negative-infinity": {"city": ["Paris", float("-inf")]},
    "lone-surrogate": {"city": "\ud800"},
}


def _kept(result: RunResult) -> None:
    """The evidence is a valid history that persists and loads back as it was."""
    validate_history(result.messages)
    assert load_messages(dump_messages(result.messages)) == result.messages


BAD_CASES = [
    pytest.param(wire, case, streamed, id=f"{wire}-{case}-{'stream' if streamed else 'run'}")
    for wire in ALL_WIRES
    for case in BAD_ARGUMENTS
    for streamed in (False, True)
    # google-genai reads a non-streamed interaction's NaN and infinities as null: nothing
    # hostile reaches thinkagent there (and the emulator's proof, of the NaN, cannot fit)
    if streamed or wire != "gemini-interactions" or case == "lone-surrogate"
]


@pytest.mark.parametrize(("wire", "case", "streamed"), BAD_CASES)
async def test_defect_1_2_bad_tool_arguments_are_an_error_result_streamed_or_not(
    emu: Emulator, wire: Wire, case: str, streamed: bool
) -> None:
    calls: list[str] = []

    async def weather(city: str) -> str:
        """Current weather for a city."""
        calls.append(city)
        return await get_weather(city)

    emu.script(
        EMULATOR_API[wire],
        [Reply(thinking="Look it up.", tool_calls=[ToolCallSpec("weather", BAD_ARGUMENTS[case])])],
    )
    async with wire_model(emu, wire, retries=False) as model:
        # before: a raw ValidationError out of run_stream (NaN, infinities), a raw
        # UnicodeEncodeError out of the next request (a lone surrogate)
        result = await outcome(
            Agent(model, tools=[weather]), "Weather in Paris?", streamed=streamed
        )
    assert isinstance(result, RunResult), result
    call = next(p for p in result.messages[1].parts if isinstance(p, ToolCall))
    assert isinstance(call.arguments, str) and call.arguments.isascii()  # the text, as evidence
    (answer,) = result.messages[2].tool_results
    assert answer.is_error and "Arguments for tool 'weather'" in str(answer.content)
    assert not calls
    _kept(result)


@pytest.mark.parametrize("thinking", ["we\udfffigh", "Weigh it."], ids=["mended", "intact"])
@pytest.mark.parametrize("streamed", [False, True], ids=["run", "stream"])
@pytest.mark.parametrize("wire", ALL_WIRES)
async def test_defect_2_a_lone_surrogate_in_model_text_and_thinking_is_mended_on_every_wire(
    emu: Emulator, wire: Wire, streamed: bool, thinking: str
) -> None:
    emu.script(EMULATOR_API[wire], [Reply(thinking=thinking, text="hi \ud800 there")])
    async with wire_model(emu, wire, retries=False) as model:
        agent = Agent(model, tools=[get_weather])
        result = await outcome(agent, QUESTION, streamed=streamed)
        assert isinstance(result, RunResult), result
        assert result.output == "hi \ufffd there"
        kept = [t.text for t in result.messages[1].thinking if t.text]
        assert all(("\ufffd" in t) == (thinking != "Weigh it.") for t in kept)
        _kept(result)
        # the next requests send the mended history (a tool loop: the whole turn goes back,
        # with no proof of the text as it came): no UnicodeEncodeError, no refused proof
        again = await outcome(agent, "And now?", history=result.messages, streamed=streamed)
    assert isinstance(again, RunResult), again
