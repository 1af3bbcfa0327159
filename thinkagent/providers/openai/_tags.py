"""The `<think>` splitter, shared by the families (`thinkagent.providers._tags`): Chat endpoints
and Kimi on Bedrock put reasoning inline."""

from .._tags import DEFAULT_TAGS, Segment, ThinkTagSplitter, join_think_tags, split_think_tags

__all__ = ["DEFAULT_TAGS", "Segment", "ThinkTagSplitter", "join_think_tags", "split_think_tags"]
