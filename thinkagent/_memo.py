"""`PerMessage`: what is derived from one message (or one part), derived once and kept while the
message lives: the adapters' wire forms (ADR 180). `PerPrefix`: what a pass over a history
found in its first messages, kept for the conversation's next request.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Hashable, Iterable, Sequence
from itertools import islice, repeat
from operator import is_
from typing import Any, TypeVar, cast

__all__ = ["PerMessage", "PerPrefix", "shared"]

T = TypeVar("T")


class _Ref(weakref.ref[Any]):
    """A weak reference to a message, with its key (its id) and what was derived from it, by
    kind."""

    __slots__ = ("key", "values")

    key: int
    values: dict[Hashable, Any]


class PerMessage:
    """What an adapter derives from one message alone (its wire form, a fact about it), derived
    the first time it is asked for and kept while the message lives: a conversation's later
    requests derive their new messages only (ADR 180).

    Messages and parts are frozen, so what is derived from one never changes; `kind` names what
    is derived and every setting it depends on (`("items", store)`). Entries are keyed by
    identity, not value (a frozen pydantic model hashes by value, a walk of all of it, which is
    what this spares), and dropped by a weak reference's callback when the message is
    collected: nothing outlives the conversations that hold it. A value must not depend on
    where the message sits in a history (an error naming its index is raised, not kept), and
    is shared: callers copy what they change (`detached`).
    """

    __slots__ = ("__weakref__", "_entries")

    def __init__(self) -> None:
        self._entries: dict[int, _Ref] = {}

    def get(self, item: object, kind: Hashable, derive: Callable[..., T], *args: Any) -> T:
        """What `derive(*args)` gives for `item` (a message or a part), derived once."""
        key = id(item)
        ref = self._entries.get(key)
        if ref is None or ref() is not item:
            ref = _Ref(item, self._forget)
            ref.key, ref.values = key, {}
            self._entries[key] = ref
        else:
            values = ref.values
            if kind in values:
                return values[kind]
        value = ref.values[kind] = derive(*args)
        return value

    def peek(self, item: object, kind: Hashable) -> Any:
        """What was kept for `item` under `kind`, or None."""
        ref = self._entries.get(id(item))
        if ref is None or ref() is not item:
            return None
        return ref.values.get(kind)

    def put(self, item: object, kind: Hashable, value: Any) -> None:
        """Keep `value` for `item` under `kind` (in place of what was there)."""
        key = id(item)
        ref = self._entries.get(key)
        if ref is None or ref() is not item:
            ref = _Ref(item, self._forget)
            ref.key, ref.values = key, {}
            self._entries[key] = ref
        ref.values[kind] = value

    def _forget(self, ref: weakref.ref[Any]) -> None:
        """Drop the entry of a collected item (unless its id was taken by a new entry)."""
        key = cast("_Ref", ref).key
        if self._entries.get(key) is ref:
            del self._entries[key]

    def __len__(self) -> int:
        return len(self._entries)


def shared(kept: Iterable[Any], given: Iterable[Any]) -> int:
    """How many items `given` starts with that are `kept`'s first items, by identity (compared
    in C: a pass over a long history)."""
    same = list(map(is_, kept, given))
    try:
        return same.index(False)
    except ValueError:
        return len(same)


class PerPrefix:
    """What a pass over a history (a check, a replay) found in its first messages, kept for the
    conversation's next request, which starts after that prefix and passes over its new
    messages only: a request costs its new messages, not the history (ADR 180).

    Per conversation and `kind` (what the pass is and every setting it depends on) the states
    kept last at `SLOTS` different lengths, held with the conversation's first message
    (`PerMessage`): they go when the conversation does. More than one, because a conversation
    grows two ways: a run's next request extends the last one (resumed from its end), and the
    next run often starts again from the same history with another prompt (resumed from where
    the last run's prompt began, kept before the run's two ends). A request resumes only from
    a prefix its history starts with, the same messages by identity, which one pass over the
    prefix's references checks. A state is shared: callers copy what they change. A state
    must hold no message (it names them by index): the first message would keep itself alive.
    """

    __slots__ = ("_kept",)

    SLOTS = 3
    """States kept per conversation and kind: a run's prompt and its two requests' ends."""

    def __init__(self) -> None:
        self._kept = PerMessage()

    def resume(
        self,
        messages: Sequence[Any],
        kind: Hashable,
        usable: Callable[[int, Any], bool] | None = None,
        *,
        partial: bool = False,
    ) -> tuple[int, Any]:
        """The state kept for the longest prefix `messages[:n]` under `kind` (that `usable(n,
        state)` accepts), with `n`; `(0, None)` when none is. With `partial`, a state also
        serves the first `n` messages its history shares with `messages` (a state kept per
        message, of which the caller takes the first `n`)."""
        if not messages or messages[0] is None:
            return 0, None
        kept = cast("list[tuple[tuple[Any, ...], Any]] | None", self._kept.peek(messages[0], kind))
        best: tuple[int, Any] = (0, None)
        for rest, state in kept or ():
            n = len(rest) + 1
            if partial:
                n = 1 + shared(rest, islice(messages, 1, None))
            if (
                best[0] < n <= len(messages)
                and (partial or all(map(is_, rest, islice(messages, 1, n))))
                and (usable is None or usable(n, state))
            ):
                best = (n, state)
        return best

    def keep(self, messages: Sequence[Any], n: int, kind: Hashable, state: Any) -> None:
        """Keep `state`, what the pass found in `messages[:n]`, for the next requests (in place
        of one kept at the same length, else of the one kept first). The first message is not
        among the references kept (it holds them): a history holding it again is not kept."""
        if not n or messages[0] is None:
            return
        first = messages[0]
        rest = tuple(islice(messages, 1, n))
        if any(map(is_, rest, repeat(first))):  # it would hold itself: not kept
            return
        entry = (rest, state)
        kept = cast("list[tuple[tuple[Any, ...], Any]] | None", self._kept.peek(messages[0], kind))
        others = [e for e in kept or () if len(e[0]) != n - 1]
        self._kept.put(messages[0], kind, [entry, *others[: self.SLOTS - 1]])

    def keep_ends(
        self,
        messages: Sequence[Any],
        checked: int,
        kind: Hashable,
        state: Callable[[int], Any],
        prompt: int,
    ) -> None:
        """Keep what a pass found past `checked` (`state(n)` for the first `n` messages) where
        the history's last prompt starts and at its end: the next run from the same history,
        the run's next step."""
        for n in sorted({prompt, len(messages)}):
            if n > checked:
                self.keep(messages, n, kind, state(n))

    def any(
        self, messages: Sequence[Any], kind: Hashable, test: Callable[[Any], bool], prompt: int
    ) -> bool:
        """Whether a message of `messages` passes `test` (what `kind` names), kept as a pass's
        state (`keep_ends`, `prompt` where the last prompt starts): a conversation's later
        requests test their new messages only."""
        checked, found = self.resume(messages, kind)
        if found:
            return True
        end = len(messages)
        at = next((i for i in range(checked, end) if test(messages[i])), end)
        self.keep_ends(messages, checked, kind, lambda n: n > at, prompt)
        return at < end
