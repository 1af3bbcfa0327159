"""The incremental `<think>` splitter: every way a content can be cut into chunks gives the
same reasoning and text as the whole content at once."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from thinkagent.providers.openai._tags import (
    ThinkTagSplitter,
    join_think_tags,
    split_think_tags,
)

SAMPLES = [
    "<think>\nThe user wants the weather.\n</think>\n\nIt is sunny.",
    "<think>a</think>b",
    "plain text, no tags at all\n",
    "  <think> spaced </think>  answer  ",
    "<think>unclosed reasoning  ",
    "text <thi",
    "before<think>mid</think>after<think>again</think>end",
    "<think></think>empty reasoning",
    "a < b and </think> alone",
    "<<think>>x</think>>",
    "",
]


def streamed(
    content: str, cuts: list[int], tags: tuple[str, str] = ("<think>", "</think>")
) -> list[tuple[bool, str]]:
    splitter = ThinkTagSplitter(tags)
    segments: dict[int, tuple[bool, list[str]]] = {}
    bounds = [0, *sorted(cuts), len(content)]
    pieces = [content[a:b] for a, b in itertools.pairwise(bounds)]
    for piece in pieces:
        for number, thinking, text in splitter.feed(piece):
            segments.setdefault(number, (thinking, []))[1].append(text)
    for number, thinking, text in splitter.end():
        segments.setdefault(number, (thinking, []))[1].append(text)
    return [(thinking, "".join(parts)) for thinking, parts in segments.values()]


def test_whole_content_splits_into_reasoning_and_text() -> None:
    assert split_think_tags(SAMPLES[0]) == [
        (True, "The user wants the weather."),
        (False, "It is sunny."),
    ]
    assert split_think_tags("plain text, no tags at all\n") == [
        (False, "plain text, no tags at all\n")
    ]
    assert split_think_tags("text <thi") == [(False, "text <thi")]
    assert split_think_tags("<think>unclosed reasoning  ") == [(True, "unclosed reasoning")]
    assert split_think_tags("<think></think>empty reasoning") == [(False, "empty reasoning")]
    assert split_think_tags("") == []


def test_interleaved_blocks_keep_their_order() -> None:
    assert split_think_tags(SAMPLES[6]) == [
        (False, "before"),
        (True, "mid"),
        (False, "after"),
        (True, "again"),
        (False, "end"),
    ]


@pytest.mark.parametrize("content", SAMPLES)
def test_every_single_split_position(content: str) -> None:
    whole = split_think_tags(content)
    for i in range(len(content) + 1):
        assert streamed(content, [i]) == whole, i


@pytest.mark.parametrize("content", SAMPLES[:3] + SAMPLES[6:7])
def test_every_pair_of_split_positions(content: str) -> None:
    whole = split_think_tags(content)
    for i in range(len(content) + 1):
        for j in range(i, len(content) + 1):
            assert streamed(content, [i, j]) == whole, (i, j)


def test_character_by_character() -> None:
    for content in SAMPLES:
        assert streamed(content, list(range(len(content)))) == split_think_tags(content)


def test_pieces_are_released_as_soon_as_they_are_certain() -> None:
    splitter = ThinkTagSplitter()
    assert splitter.feed("<th") == []
    assert splitter.feed("ink>\nI reason") == [(1, True, "I reason")]
    assert splitter.feed("ing.\n</th") == [(1, True, "ing.")]
    assert splitter.feed("ink>\n\nAnswer") == [(2, False, "Answer")]
    assert splitter.end() == []


def test_custom_tags() -> None:
    tags = ("<reasoning>", "</reasoning>")
    content = "<reasoning>why</reasoning>because"
    assert split_think_tags(content, tags) == [(True, "why"), (False, "because")]
    for i in range(len(content) + 1):
        assert streamed(content, [i], tags) == split_think_tags(content, tags)


def test_join_puts_reasoning_back_inline() -> None:
    segments = [(True, "why"), (False, "because")]
    joined = join_think_tags(segments)
    assert joined == "<think>\nwhy\n</think>\n\nbecause"
    assert split_think_tags(joined) == segments


@given(
    st.lists(
        st.sampled_from(["<think>", "</think>", "<", "th", "ink>", "/", " ", "\n", "a", "bc"]),
        max_size=14,
    ),
    st.lists(st.integers(min_value=0, max_value=80), max_size=6),
)
def test_any_chunking_matches_the_whole(tokens: list[str], cuts: list[int]) -> None:
    content = "".join(tokens)
    cuts = [c for c in cuts if c <= len(content)]
    assert streamed(content, cuts) == split_think_tags(content)
