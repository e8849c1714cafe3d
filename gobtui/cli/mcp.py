"""`mcp`: the read-only MCP server over stdio, or (--print-config) how to register it."""

from __future__ import annotations

import argparse
import sys

from gobtui.cli.safe_output import SafeText


def register(
    commands: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    mcp = commands.add_parser(
        "mcp", parents=[common], help="a read-only MCP server over stdio, for agents"
    )
    mcp.add_argument(
        "--allow-transcript-content",
        action="store_true",
        help="also offer search_snapshot and read_snapshot (archived transcript text)",
    )
    mcp.add_argument(
        "--print-config", action="store_true", help="print how to register it, and exit"
    )
    mcp.set_defaults(handler=cmd_mcp)


def cmd_mcp(args: argparse.Namespace) -> int:
    from gobtui.cli.mcp_server import build_server, print_config  # the SDK loads only here

    if args.print_config:
        for line in print_config():
            print(line)
        return 0
    if isinstance(sys.stdout, SafeText):  # stdout carries the protocol's JSON, to a client
        sys.stdout = sys.stdout.raw
    homes = {"claude_home": args.claude_home, "codex_home": args.codex_home}
    build_server(args.allow_transcript_content, homes).run("stdio")
    return 0
