"""Every emulator fault, on every wire API, run and streamed, on the first and on a later
request of a thinking + tool run: the run either recovers (the SDK retried) with evidence
byte-identical to the fault-free run's (cache counts aside), or raises a clear
`ThinkAgentError` whose history is valid, holds no partial message, and resumes to that same
byte-identical result.

The five wires of one case run at once, each with its fault aimed at its own API, so the
SDKs' retry back-offs overlap instead of adding up."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest

from tests.support import uncached
from thinkagent import Agent, Message, ThinkAgentError, dump_messages, validate_history
from thinkagent.emulator import Emulator, Fault

from .wires import EMULATOR_API, QUESTION, WIRES, Wire, get_weather, outcome, run, wire_model

FAULTS: dict[str, Callable[[str], Fault]] = {
    "http-429": lambda api: Fault.rate_limited(api=api),
    "http-529": lambda api: Fault.http(529, retry_after=0.01, api=api),
    "stream_error": lambda api: Fault.stream_error(api=api),
    "cut": lambda api: Fault.cut(api=api),
    "malformed": lambda api: Fault.malformed(api=api),
    "slow": lambda api: Fault.slow(0.005, api=api),
}

_references: dict[tuple[Wire, bool], list[Message]] = {}


async def reference(emu: Emulator, wire: Wire, streamed: bool) -> list[Message]:
    """The fault-free run's messages (the emulator is deterministic: computed once)."""
    key = (wire, streamed)
    if key not in _references:
        async with wire_model(emu, wire) as model:
            result = await run(Agent(model, tools=[get_weather]), QUESTION, streamed=streamed)
        _references[key] = result.messages
    return _references[key]


async def fault_case(emu: Emulator, wire: Wire, streamed: bool, kind: str, at: str) -> None:
    expected = await reference(emu, wire, streamed)
    api = EMULATOR_API[wire]
    if at == "later":
        emu.inject(Fault.slow(0.0, api=api))  # the first request goes through untouched
    emu.inject(FAULTS[kind](api))
    async with wire_model(emu, wire) as model:
        agent = Agent(model, tools=[get_weather])
        result = await outcome(agent, QUESTION, streamed=streamed)
        if isinstance(result, ThinkAgentError):
            assert str(result)
            validate_history(result.messages)
            # complete messages only, each one as the fault-free run has it
            assert cold(result.messages) == cold(expected[: len(result.messages)])
            assert len(result.messages) == (1 if at == "first" else 3)
            result = await run(agent, None, history=result.messages, streamed=streamed)
    assert not [f for f in emu.pending_faults if f.api == api]  # the fault was met
    assert dump_messages(cold(result.messages)) == dump_messages(cold(expected))


def cold(messages: list[Message]) -> list[Message]:
    """The messages with their cache counts zeroed: what a request read from the prompt cache
    depends on what earlier attempts wrote there (a cut stream's request was still cached, as
    the services do), the only thing a fault may change in the evidence."""
    return [m.model_copy(update={"usage": uncached(m.usage)}) for m in messages]


@pytest.mark.parametrize("at", ["first", "later"])
@pytest.mark.parametrize("kind", list(FAULTS))
@pytest.mark.parametrize("streamed", [False, True], ids=["run", "run_stream"])
async def test_a_fault_on_any_wire_ends_recovered_or_in_a_resumable_error(
    emu: Emulator, streamed: bool, kind: str, at: str
) -> None:
    for wire in WIRES:  # the references first, fault-free
        await reference(emu, wire, streamed)
    outcomes = await asyncio.gather(
        *(fault_case(emu, wire, streamed, kind, at) for wire in WIRES), return_exceptions=True
    )
    failed = {wire: outcome for wire, outcome in zip(WIRES, outcomes, strict=True) if outcome}
    if failed:
        pytest.fail(
            "; ".join(f"{wire}: {type(e).__name__}: {e}" for wire, e in failed.items()),
            pytrace=False,
        )
