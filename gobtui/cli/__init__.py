"""The command line: `gobtui` and its subcommands (dispatch parses and runs them)."""
