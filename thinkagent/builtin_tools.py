"""Built-in tools: the provider's own tools (web search, code execution, remote MCP servers...),
asked for with one typed config per tool, the same on every adapter.

```python
from thinkagent import Agent, CodeExecution, WebSearch

agent = Agent(model, tools=[get_weather, WebSearch(max_uses=3), CodeExecution()])
```

A built-in tool goes in the agent's `tools` with its function tools: the provider runs it inside
the model's turn, and its calls and results come back in the message as `ServerToolCall` and
`ServerToolResult` parts. Each adapter declares it in its provider's own shape (Anthropic
`web_search_20250305`, Responses `{"type": "web_search"}`, Gemini `google_search`...) and
refuses, with a `ConfigurationError` naming it before anything is sent, a tool or an option its
provider or model does not have. `native` merges fields into that declaration for one wire (its
key: `"anthropic"`, `"responses"` or `"gemini"`), for what has no portable name yet. See
`docs/builtin-tools.md`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import MISSING, dataclass, field, fields
from types import MappingProxyType
from typing import Any, ClassVar, Literal

from .errors import ConfigurationError

__all__ = [
    "BUILTIN_WIRES",
    "BuiltinTool",
    "CodeExecution",
    "FileSearch",
    "ImageGeneration",
    "MCPServer",
    "ToolSearch",
    "URLContext",
    "UserLocation",
    "WebFetch",
    "WebSearch",
    "unsupported",
]

BUILTIN_WIRES = ("anthropic", "responses", "gemini")
"""The wires with built-in tools, as `native` names them."""

_EMPTY: Mapping[str, Mapping[str, Any]] = MappingProxyType({})


@dataclass(frozen=True, kw_only=True)
class BuiltinTool:
    """What every built-in tool config has: its `kind` (the portable name, also on the
    `ServerToolCall`s it makes as `builtin`) and `native`, fields merged into the provider's
    own declaration, per wire (`{"anthropic": {"type": "web_search_20260209"}}`)."""

    kind: ClassVar[str] = ""
    native: Mapping[str, Mapping[str, Any]] = field(default_factory=lambda: _EMPTY, repr=False)

    def __post_init__(self) -> None:
        for key in self.native:
            if key not in BUILTIN_WIRES:
                wires = ", ".join(repr(w) for w in BUILTIN_WIRES)
                raise ConfigurationError(
                    f"{type(self).__name__}(native=...): {key!r} is no wire with built-in tools "
                    f"(one of {wires})"
                )
        object.__setattr__(
            self, "native", MappingProxyType({k: dict(v) for k, v in self.native.items()})
        )

    @property
    def label(self) -> str:
        """How errors name this tool: its class name (with the server's name for an
        `MCPServer`)."""
        return type(self).__name__

    def options(self) -> list[str]:
        """The options set to something other than their default, which an adapter checks
        against what its provider takes (required fields are not options)."""
        return [
            f.name
            for f in fields(self)
            if f.name != "native"
            and f.default is not MISSING
            and getattr(self, f.name) != f.default
        ]

    def native_for(self, wire: str) -> dict[str, Any]:
        """The fields `native` merges into the declaration on `wire`."""
        return dict(self.native.get(wire, {}))


def _names(value: Sequence[str] | None, owner: str, option: str) -> tuple[str, ...] | None:
    if value is None:
        return None
    if isinstance(value, str):
        raise ConfigurationError(f"{owner}({option}=...) takes a list of names, not one string")
    items = tuple(value)
    for item in items:
        if not isinstance(item, str) or not item:  # pyright: ignore[reportUnnecessaryIsInstance]
            raise ConfigurationError(f"{owner}({option}=...) holds {item!r}, not a name")
    return items


def _positive(value: int | None, owner: str, option: str) -> None:
    if value is not None and (not isinstance(value, int) or value < 1):  # pyright: ignore[reportUnnecessaryIsInstance]
        raise ConfigurationError(f"{owner}({option}=...) must be 1 or more, got {value!r}")


@dataclass(frozen=True, kw_only=True)
class UserLocation:
    """Where the user roughly is, to localise search results (each field optional): `city`,
    `region`, `country` (two-letter ISO code) and `timezone` (IANA name)."""

    city: str | None = None
    region: str | None = None
    country: str | None = None
    timezone: str | None = None

    def to_dict(self) -> dict[str, str]:
        """The set fields, as the providers' `user_location` objects name them."""
        values = {"city": self.city, "region": self.region, "country": self.country}
        values["timezone"] = self.timezone
        return {k: v for k, v in values.items() if v is not None}


@dataclass(frozen=True, kw_only=True)
class WebSearch(BuiltinTool):
    """Web search, run by the provider (Anthropic, Responses, Gemini's Google Search).

    `max_uses` bounds the searches of one request (Anthropic); `allowed_domains` and
    `blocked_domains` filter the results (not both); `user_location` localises them;
    `search_context_size` (`"low"`, `"medium"`, `"high"`) is the Responses API's guidance on
    how much of the context the results may take. An option the chosen provider has no place
    for is a `ConfigurationError` before sending.
    """

    kind: ClassVar[str] = "web_search"
    max_uses: int | None = None
    allowed_domains: Sequence[str] | None = None
    blocked_domains: Sequence[str] | None = None
    user_location: UserLocation | None = None
    search_context_size: Literal["low", "medium", "high"] | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        _positive(self.max_uses, "WebSearch", "max_uses")
        object.__setattr__(
            self, "allowed_domains", _names(self.allowed_domains, "WebSearch", "allowed_domains")
        )
        object.__setattr__(
            self, "blocked_domains", _names(self.blocked_domains, "WebSearch", "blocked_domains")
        )
        if self.allowed_domains is not None and self.blocked_domains is not None:
            raise ConfigurationError("WebSearch takes allowed_domains or blocked_domains, not both")
        if self.search_context_size not in (None, "low", "medium", "high"):
            raise ConfigurationError(
                "WebSearch(search_context_size=...) must be 'low', 'medium' or 'high', got "
                f"{self.search_context_size!r}"
            )


@dataclass(frozen=True, kw_only=True)
class WebFetch(BuiltinTool):
    """Fetching whole web pages and PDFs by URL, run by the provider (Anthropic's web fetch; on
    Gemini use `URLContext`). `max_uses`, `allowed_domains`/`blocked_domains` as for
    `WebSearch`; `max_content_tokens` bounds what one fetch brings into the context;
    `citations=True` lets the answer cite the fetched documents."""

    kind: ClassVar[str] = "web_fetch"
    max_uses: int | None = None
    allowed_domains: Sequence[str] | None = None
    blocked_domains: Sequence[str] | None = None
    max_content_tokens: int | None = None
    citations: bool | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        _positive(self.max_uses, "WebFetch", "max_uses")
        _positive(self.max_content_tokens, "WebFetch", "max_content_tokens")
        object.__setattr__(
            self, "allowed_domains", _names(self.allowed_domains, "WebFetch", "allowed_domains")
        )
        object.__setattr__(
            self, "blocked_domains", _names(self.blocked_domains, "WebFetch", "blocked_domains")
        )
        if self.allowed_domains is not None and self.blocked_domains is not None:
            raise ConfigurationError("WebFetch takes allowed_domains or blocked_domains, not both")


@dataclass(frozen=True, kw_only=True)
class CodeExecution(BuiltinTool):
    """Code the model writes and the provider runs in a sandbox (Anthropic's code execution,
    the Responses code interpreter, Gemini's code execution)."""

    kind: ClassVar[str] = "code_execution"


@dataclass(frozen=True, kw_only=True)
class FileSearch(BuiltinTool):
    """Search over the provider's stores of your files (Responses `file_search` with its
    `vector_store_ids`; Gemini API `file_search` with these as its store names).
    `max_num_results` bounds the results (Responses)."""

    kind: ClassVar[str] = "file_search"
    vector_store_ids: Sequence[str] = ()
    max_num_results: int | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        ids = _names(self.vector_store_ids, "FileSearch", "vector_store_ids") or ()
        if not ids:
            raise ConfigurationError("FileSearch needs vector_store_ids (the stores to search)")
        object.__setattr__(self, "vector_store_ids", ids)
        _positive(self.max_num_results, "FileSearch", "max_num_results")

    def options(self) -> list[str]:
        return [name for name in super().options() if name != "vector_store_ids"]


@dataclass(frozen=True, kw_only=True)
class ToolSearch(BuiltinTool):
    """The provider searches your function tools and loads only the ones it needs (Anthropic's
    tool search, the Responses `tool_search`). `deferred` names the function tools that are
    not loaded up front (`defer_loading`); `mode` is Anthropic's search (`"regex"` or
    `"bm25"`)."""

    kind: ClassVar[str] = "tool_search"
    deferred: Sequence[str] = ()
    mode: Literal["regex", "bm25"] = "regex"

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "deferred", _names(self.deferred, "ToolSearch", "deferred") or ())
        if self.mode not in ("regex", "bm25"):
            raise ConfigurationError(
                f"ToolSearch(mode=...) must be 'regex' or 'bm25', got {self.mode!r}"
            )

    def options(self) -> list[str]:
        return [name for name in super().options() if name != "deferred"]


ApprovalPolicy = Literal["always", "never"]
"""Which calls to a remote MCP server's tools the provider asks you to approve first."""


@dataclass(frozen=True, kw_only=True)
class MCPServer(BuiltinTool):
    """A remote MCP server the provider connects to and calls itself (Anthropic's MCP connector,
    Responses `mcp`, Gemini API `mcp_servers`).

    `url` and `name` (the label its calls carry) are required; `allowed_tools` limits the
    server's tools the model sees; `require_approval` (Responses): `"always"` (the default
    there) makes each call wait for your approval through the agent's approval flow,
    `"never"` lets the provider call freely; `authorization` is a bearer token for the server,
    `headers` other headers; `description` tells the model what the server is for. Several
    servers may be given, each with its own name.
    """

    kind: ClassVar[str] = "mcp"
    url: str
    name: str
    allowed_tools: Sequence[str] | None = None
    require_approval: ApprovalPolicy | None = None
    authorization: str | None = field(default=None, repr=False)
    headers: Mapping[str, str] | None = field(default=None, repr=False)
    description: str | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        if not isinstance(self.url, str) or not self.url.startswith(("https://", "http://")):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise ConfigurationError(f"MCPServer(url=...) must be an http(s) URL, got {self.url!r}")
        if not isinstance(self.name, str) or not self.name:  # pyright: ignore[reportUnnecessaryIsInstance]
            raise ConfigurationError("MCPServer needs a name (the label its calls carry)")
        object.__setattr__(
            self, "allowed_tools", _names(self.allowed_tools, "MCPServer", "allowed_tools")
        )
        if self.headers is not None:
            object.__setattr__(self, "headers", MappingProxyType(dict(self.headers)))
        if self.require_approval not in (None, "always", "never"):
            raise ConfigurationError(
                "MCPServer(require_approval=...) must be 'always' or 'never', got "
                f"{self.require_approval!r}"
            )

    @property
    def label(self) -> str:
        return f"MCPServer(name={self.name!r})"


@dataclass(frozen=True, kw_only=True)
class ImageGeneration(BuiltinTool):
    """Images the model generates during its turn (the Responses `image_generation` tool)."""

    kind: ClassVar[str] = "image_generation"


@dataclass(frozen=True, kw_only=True)
class URLContext(BuiltinTool):
    """Gemini reads the web pages whose URLs the prompt gives (`url_context`; on Anthropic use
    `WebFetch`)."""

    kind: ClassVar[str] = "url_context"


def unsupported(tool: BuiltinTool, where: str, hint: str = "") -> ConfigurationError:
    """The error for a built-in tool (or one of its options) `where` does not take."""
    return ConfigurationError(f"{tool.label} is not available {where}{hint}")
