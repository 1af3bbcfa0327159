"""The script every provider example runs: a question to think about, a follow-up that calls a
tool, and a look at what went back on the wire.

1. The bat-and-ball question, with thinking on: each thinking block's text (or
   `[redacted reasoning]`), the length of its proof, and the usage.
2. A follow-up that calls a tool: the tool-call turn's thinking goes back with the tool result,
   byte for byte, and the provider verifies it (the run only completes if it does).
3. The same replay with that proof broken (one character changed; for unsigned reasoning, the
   reasoning dropped): the provider refuses it with its own error.

Each example picks the real service when its credentials are in the environment, and the
thinkagent emulator otherwise.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager

from thinkagent import Agent, Message, Model, ProviderError, RunResult, dump_messages, load_messages
from thinkagent.emulator import Emulator

QUESTION = (
    "A bat and a ball cost $1.10 in total. The bat costs $1.00 more than the ball. "
    "How much does the ball cost?"
)
FOLLOW_UP = "Is it $0.05? Check it with the check_answer tool."


def check_answer(ball: float) -> str:
    """Check a price for the ball (in dollars): does the bat-and-ball puzzle add up?"""
    bat = ball + 1.00
    verdict = "correct" if abs(ball + bat - 1.10) < 1e-9 else "wrong"
    return f"ball ${ball:.2f} + bat ${bat:.2f} = ${ball + bat:.2f}: {verdict}"


@contextmanager
def service(name: str, *credentials: str) -> Iterator[Emulator | None]:
    """None (use the real service) when one of `credentials` is set, else a running emulator."""
    if any(os.environ.get(variable) for variable in credentials):
        print(f"Running on {name} ({' / '.join(credentials)} is set).")
        yield None
        return
    print(f"Running on the thinkagent emulator; set {' or '.join(credentials)} for {name}.")
    with Emulator() as emulator:
        yield emulator


async def run(model: Model) -> None:
    """Steps 1 to 3 above, on `model`."""
    print(f"Model: {model.model_name} (scope {model.scope!r})")
    first = await Agent(model).run(QUESTION)
    show(QUESTION, first)

    agent = Agent(model, tools=[check_answer])
    second = await agent.run(FOLLOW_UP, history=first.messages)
    show(FOLLOW_UP, second)

    turn = next(i for i, m in enumerate(second.messages) if m.tool_calls)
    head = second.messages[: turn + 2]  # up to the tool-call turn and its results
    proofs = _proofs(second.messages[turn])
    what = f"{proofs} proof(s)" if proofs else "its unsigned reasoning"
    print(f"\nReplay: the request after the tool result carried {what} back, byte for byte,")
    print(f"and {model.scope} accepted it: the run above completed.")
    try:
        await agent.run(None, history=_broken(head, turn, signed=proofs > 0))
        print("Broken replay: accepted (unexpected!)")
    except ProviderError as error:
        change = "one character changed" if proofs else "reasoning dropped"
        print(f"Broken replay ({change}): refused, {error}")


def show(prompt: str, result: RunResult) -> None:
    """The run's new messages, part by part, with the length of every proof."""
    print(f"\n> {prompt}")
    for message in result.new_messages:
        for part in message.parts:
            if part.kind == "thinking":
                text = "[redacted reasoning]" if part.is_redacted else part.text.strip()
                name = f"thinking {part.id}" if part.id else "thinking"
                print(f"  {name}: " + (text or "[no visible text]").replace("\n", "\n    | "))
                print(f"    ({_proof(part.signature or part.redacted)})")
            elif part.kind == "text" and message.role == "assistant" and part.text.strip():
                signed = f"  ({_proof(part.signature)})" if part.signature else ""
                print("  text: " + part.text.strip().replace("\n", "\n        ") + signed)
            elif part.kind == "tool_call":
                signed = f"  ({_proof(part.signature)})" if part.signature else ""
                print(f"  tool call: {part.name}({json.dumps(part.arguments_dict())}){signed}")
            elif part.kind == "tool_result":
                print(f"  tool result: {part.content}")
        if message.usage is not None:
            print(f"  usage: {_usage(message)}")


def _usage(message: Message) -> str:
    """The usage line: thinking tokens as the provider reports them, or that it does not (Bedrock's
    Converse reports no thinking count: its output tokens include the thinking)."""
    u = message.usage
    assert u is not None
    if u.thinking_tokens:
        thinking = f"{u.thinking_tokens} thinking"
    elif message.thinking:
        thinking = "thinking included, its count not reported"
    else:
        thinking = "no thinking"
    return f"{u.input_tokens} in, {u.output_tokens} out ({thinking})"


def _proof(value: str | None) -> str:
    return f"proof: {len(value)} chars" if value else "no proof: plain reasoning"


def _proofs(message: Message) -> int:
    return sum(
        1 for p in message.parts if getattr(p, "signature", None) or getattr(p, "redacted", None)
    )


def _broken(messages: list[Message], index: int, *, signed: bool) -> list[Message]:
    """The history with message `index` broken: its first proof changed by one character, or
    (for unsigned reasoning) its thinking dropped. Edited as JSON, the way a corrupted store would."""
    data = json.loads(dump_messages(messages))
    parts = data[index]["parts"]
    if not signed:
        data[index]["parts"] = [p for p in parts if p["kind"] != "thinking"]
        return load_messages(json.dumps(data))
    part = next(p for p in parts if p.get("signature") or p.get("redacted"))
    key = "signature" if part.get("signature") else "redacted"
    middle = len(part[key]) // 2
    part[key] = (
        part[key][:middle] + ("A" if part[key][middle] != "A" else "B") + part[key][middle + 1 :]
    )
    return load_messages(json.dumps(data))
