"""Claude Code: the incremental state, the items, the full parse and the rewrite half."""
