"""The MCP server's stdin, checked line by line before the SDK reads it.

The SDK's stdio transport drops a line it cannot validate: an unparseable line, invalid
UTF-8, a batch (an array) or a request whose id is an object got no answer at all, and the
client waited forever. Here each such line is answered with its JSON-RPC error (-32700
parse error, id null; -32600 invalid request, with the request's id when it has a usable
one) and the server reads on. The answer goes out on the SDK's own write stream, so it is
framed and ordered as every other message is. Only lines the SDK's own validation accepts
are passed on (it validates them again, as it always does).
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import AsyncIterator, Iterator
from typing import Any, BinaryIO

import anyio
from mcp.shared.message import SessionMessage
from mcp_types import INVALID_REQUEST, PARSE_ERROR, ErrorData, JSONRPCError, jsonrpc_message_adapter
from pydantic import ValidationError

from gobtui.core.limits import MCP_LINE_MAX_BYTES


def line_error(line: bytes) -> JSONRPCError | None:
    """The error a line of stdin is answered with; None when it is a JSON-RPC message."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        return _error(None, PARSE_ERROR, "Parse error: the line is not UTF-8")
    try:
        jsonrpc_message_adapter.validate_json(text, by_name=False)  # as the SDK reads it
        valid = True
    except ValidationError as error:
        if any(e["type"] == "json_invalid" for e in error.errors()):
            return _error(None, PARSE_ERROR, "Parse error: the line is not JSON")
        valid = False
    try:
        value: Any = json.loads(text)
    except ValueError:  # what pydantic took for JSON but json does not
        return _error(None, PARSE_ERROR, "Parse error: the line is not JSON")
    if isinstance(value, list):
        return _error(None, INVALID_REQUEST, "Invalid Request: batches are not supported")
    if not isinstance(value, dict):
        return _error(None, INVALID_REQUEST, "Invalid Request: not a JSON-RPC message object")
    found = value.get("id", _ABSENT)
    usable = isinstance(found, str) or (isinstance(found, int) and not isinstance(found, bool))
    if "method" in value and found is not _ABSENT and not usable:
        # The SDK would take it for a notification (its id ignored) and never answer. (An
        # error response may carry a null id: the client could not tell which request.)
        return _error(None, INVALID_REQUEST, "Invalid Request: an id is a string or an integer")
    if valid:
        return None
    return _error(found if usable else None, INVALID_REQUEST, "Invalid Request")


_ABSENT = object()
_TOO_LONG = f"Invalid Request: a line is at most {MCP_LINE_MAX_BYTES:,} bytes"


def _error(request_id: str | int | None, code: int, message: str) -> JSONRPCError:
    return JSONRPCError(jsonrpc="2.0", id=request_id, error=ErrorData(code=code, message=message))


class CheckedStdin:
    """What the SDK's stdio_server reads (`async for line in stdin`): the client's lines that
    are JSON-RPC messages. Any other line is answered here (`answer_on` gives the stream to
    answer on, once the transport has made it) and not passed on; a blank line is skipped."""

    def __init__(self, raw: BinaryIO) -> None:
        self._raw = raw
        self._answers: Any = None
        self._ready = anyio.Event()

    def answer_on(self, write_stream: Any) -> None:
        self._answers = write_stream
        self._ready.set()

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        while line := await self._readline(MCP_LINE_MAX_BYTES + 1):
            error: JSONRPCError | None
            if len(line) > MCP_LINE_MAX_BYTES:
                await self._skip_line(line)
                error = _error(None, INVALID_REQUEST, _TOO_LONG)
            elif not line.strip():
                continue
            elif (error := line_error(line)) is None:
                yield line.decode("utf-8")
                continue
            await self._ready.wait()
            try:
                await self._answers.send(SessionMessage(error))
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                return  # the server is shutting down: nobody left to answer

    async def _skip_line(self, piece: bytes) -> None:
        """Read the rest of an over-long line, a bounded piece at a time, keeping none."""
        while piece and not piece.endswith(b"\n"):
            piece = await self._readline(MCP_LINE_MAX_BYTES)

    async def _readline(self, limit: int) -> bytes:
        """At most `limit` bytes of the next line, read in a worker thread (as anyio's
        wrap_file reads, which has no limit)."""
        return await anyio.to_thread.run_sync(self._raw.readline, limit)


@contextlib.contextmanager
def claimed_stdin() -> Iterator[BinaryIO]:
    """The protocol's stdin on a private descriptor, fd 0 on the null device meanwhile (what
    the SDK does when it reads stdin itself): nothing else in the process reads the wire."""
    try:
        private = os.dup(0)
        os.set_inheritable(private, False)
    except OSError:
        yield sys.stdin.buffer  # no descriptor to divert: read it in place
        return
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    try:
        # closefd=False: a worker thread may still block on it after the server is done.
        yield os.fdopen(private, "rb", closefd=False)
    finally:
        os.dup2(private, 0)
