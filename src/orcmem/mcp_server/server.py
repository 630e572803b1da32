"""The MCP server: tool_specs' tools over AgentTools, listed by whether memory is on, asking approval by elicitation.

This module imports the MCP SDK; `orcmem.mcp_server` imports it only when a server is built.
Annotations here are evaluated (no `from __future__ import annotations`): the SDK reads the tools' signatures, which
`_tool_function` builds from each spec, to validate arguments and to list them.
"""

import inspect
import json
from collections.abc import Awaitable, Callable
from inspect import Parameter
from typing import Annotated, Any, Literal

import anyio.to_thread
from mcp.server import MCPServer
from mcp.server.mcpserver import AcceptedElicitation, Context, Elicit, ElicitationResult, Resolve
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent, Tool, ToolAnnotations
from pydantic import BaseModel, Field

from orcmem import __version__
from orcmem.mcp_server.identity import ALWAYS_LISTED, INSTRUCTIONS, SERVER_NAME
from orcmem.mcp_server.tool_specs import HINTS, TOOLS, Arg, ArgValue, Kind, ToolSpec
from orcmem.models.data_shapes import JsonObject
from orcmem.models.errors import OrcmemError
from orcmem.service.agent_tools import AgentTools
from orcmem.service.approvals import Ask
from orcmem.service.core import MEMORY_OFF_MESSAGE

MEMORY_OFF_REFUSAL = f"{MEMORY_OFF_MESSAGE} While it is off, only task_context is available."
MEMORY_TOOLS = frozenset(spec.name for spec in TOOLS if spec.needs_memory)
OUTPUT_SCHEMAS = {spec.name: spec.output for spec in TOOLS if spec.output is not None}

# Elicitation choices as the user sees them, and the answers they mean.
CHOICES = {
    "Allow once": "once",
    "Allow for this session": "session",
    "Allow for this workspace": "workspace",
    "Deny": "deny",
}


class Approval(BaseModel):
    """The user's answer to "may the agent change project memory?"."""

    decision: Literal["Allow once", "Allow for this session", "Allow for this workspace", "Deny"] = Field(
        title="Allow this change to project memory?",
        description="Allow it once, for the rest of this session, for every session in this workspace, or deny it.",
    )


def _can_elicit(ctx: Context) -> bool:
    """Whether this client can be asked a form question during this call."""
    capabilities = ctx.client_capabilities
    elicitation = capabilities.elicitation if capabilities is not None else None
    if elicitation is None or (elicitation.form is None and elicitation.url is not None):
        return False
    modern = ctx.protocol_version is not None and ctx.protocol_version >= "2026-07-28"
    # Before 2026-07-28 the question is a request sent to the client mid-call, which needs a back channel.
    return modern or bool(getattr(ctx.session, "can_send_request", False))


def _ask_from(outcome: ElicitationResult[Approval]) -> Ask | None:
    """The `ask` a tool body gets from the resolver's outcome (None: no question could be asked)."""
    if isinstance(outcome, AcceptedElicitation):
        if isinstance(outcome.data, Approval):
            answer = CHOICES[outcome.data.decision]
            return lambda _question: answer
        return None
    return lambda _question: "deny"  # declined or cancelled


class OrcmemServer(MCPServer):
    """An MCPServer that lists and serves the memory tools only while memory is on (checked on every request)."""

    def __init__(self, provide: Callable[[], AgentTools]) -> None:
        """Serve the tools `provide` returns (it may block while the service opens)."""
        super().__init__(SERVER_NAME, version=__version__, instructions=INSTRUCTIONS, log_level="WARNING")
        self.provide = provide

    async def memory_on(self) -> bool | None:
        """Whether memory is on right now; None when the service could not be opened (the tools say why)."""
        try:
            tools = await anyio.to_thread.run_sync(self.provide)
            return await anyio.to_thread.run_sync(tools.is_enabled)
        except Exception:
            return None

    async def list_tools(self) -> list[Tool]:
        """Every tool while memory is on; only task_context while it is off; each with its spec's outputSchema."""
        # The SDK derives an outputSchema only from a return annotation: the specs declare theirs by hand.
        listed = [
            tool.model_copy(update={"output_schema": OUTPUT_SCHEMAS[tool.name]})
            if tool.name in OUTPUT_SCHEMAS
            else tool
            for tool in await super().list_tools()
        ]
        if await self.memory_on():
            return listed
        return [tool for tool in listed if tool.name in ALWAYS_LISTED]

    async def call_tool(self, name: str, arguments: JsonObject, context: Context | None = None) -> Any:
        """Refuse a memory tool while memory is off (an agent may have listed it earlier), else call it."""
        if name in MEMORY_TOOLS and await self.memory_on() is False:
            raise ToolError(MEMORY_OFF_REFUSAL)
        return await super().call_tool(name, arguments, context)


Run = Callable[[Callable[[AgentTools], object]], Awaitable[object]]
AskFirst = Callable[[Context, str, dict[str, ArgValue]], Awaitable[Elicit[Approval] | None]]

_PYTHON_TYPES: dict[Kind, type] = {"string": str, "integer": int, "boolean": bool}


def build_server(tools: AgentTools | Callable[[], AgentTools]) -> MCPServer:
    """The MCP server "orcmem" with the tools of `tool_specs.TOOLS` over `tools` (or a function that returns them)."""
    provide: Callable[[], AgentTools] = tools if callable(tools) else (lambda: tools)
    server = OrcmemServer(provide)
    run, ask_first = _runner(provide), _asker(provide)
    for spec in TOOLS:
        server.add_tool(
            _tool_function(spec, run, ask_first),
            name=spec.name,
            title=spec.title,
            description=spec.description,
            annotations=ToolAnnotations.model_validate(HINTS[spec.hints]),
            structured_output=False,
        )
    return server


def _runner(provide: Callable[[], AgentTools]) -> Run:
    """Run a tool's work on the session's tools in a thread; an orcmem error as a ToolError."""

    async def run(work: Callable[[AgentTools], object]) -> object:
        try:
            agent = await anyio.to_thread.run_sync(provide)
            return await anyio.to_thread.run_sync(work, agent)
        except OrcmemError as exc:
            raise ToolError(str(exc)) from exc

    return run


def _answer(spec: ToolSpec, result: object) -> str | CallToolResult:
    """A tool's result as text (JSON unless it is text); with the object as structuredContent too when the spec
    declares an output schema (the spec asks a serialized copy in a text block for older clients)."""
    text = result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)
    if spec.output is None or not isinstance(result, dict):
        return text
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=result)


def _asker(provide: Callable[[], AgentTools]) -> AskFirst:
    """Elicit the user's approval when the policy says ask and the client can be asked; else no question."""

    async def ask_first(ctx: Context, tool: str, arguments: dict[str, ArgValue]) -> Elicit[Approval] | None:
        try:
            agent = await anyio.to_thread.run_sync(provide)
        except Exception:
            return None  # the tool body reports why the tools are unavailable
        if agent.headless or not _can_elicit(ctx):
            return None
        question = await anyio.to_thread.run_sync(agent.question, tool, arguments)
        return None if question is None else Elicit(question, Approval)

    return ask_first


def _parameters(spec: ToolSpec) -> list[Parameter]:
    """The spec's arguments as keyword parameters the SDK turns into its argument model (types and defaults)."""
    parameters = []
    for arg in spec.args:
        kind = _PYTHON_TYPES[arg.kind]
        typed = kind | None if arg.default is None else kind  # None: optional
        annotation = Annotated[typed, Field(json_schema_extra=_schema_of(arg))]  # type: ignore[valid-type]
        default = Parameter.empty if arg.required else arg.default
        parameters.append(Parameter(arg.name, Parameter.KEYWORD_ONLY, default=default, annotation=annotation))
    return parameters


def _schema_of(arg: Arg) -> Callable[[JsonObject], None]:
    """Make the SDK list the argument's schema as the spec gives it (the pinned early list is the spec's too)."""

    def replace(schema: JsonObject) -> None:
        schema.clear()
        schema.update(arg.schema())

    return replace


def _signed(function: Callable[..., Awaitable[object]], name: str, parameters: list[Parameter]) -> None:
    """Give `function` the name and signature the SDK reads (its argument model is named after the tool)."""
    function.__name__ = function.__qualname__ = name
    function.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    function.__annotations__ = {parameter.name: parameter.annotation for parameter in parameters}


def _tool_function(spec: ToolSpec, run: Run, ask_first: AskFirst) -> Callable[..., Awaitable[str | CallToolResult]]:
    """The SDK tool of `spec`: its arguments validated by the SDK, an approval resolved first for a write."""
    parameters = _parameters(spec)

    async def tool(**arguments: ArgValue | ElicitationResult[Approval]) -> str | CallToolResult:
        ask = _ask_from(arguments.pop("approval")) if spec.asks else None  # type: ignore[arg-type]
        try:
            result = await run(lambda agent: spec.call(agent.asking(ask) if spec.asks else agent, **arguments))
            return _answer(spec, result)
        except ToolError:
            if spec.fails_open:
                return ""  # recall fails open: a prompt is never blocked by memory
            raise

    if spec.asks:

        async def approve(ctx: Context, **arguments: ArgValue) -> Elicit[Approval] | None:
            return await ask_first(ctx, spec.name, arguments)

        context = Parameter("ctx", Parameter.KEYWORD_ONLY, annotation=Context)
        _signed(approve, f"approve_{spec.name}", [context, *parameters])
        approval = Annotated[ElicitationResult[Approval], Resolve(approve)]
        parameters = [Parameter("approval", Parameter.KEYWORD_ONLY, annotation=approval), *parameters]
    _signed(tool, spec.name, parameters)
    return tool
