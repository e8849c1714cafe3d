"""Finding, reading, caching and watching sessions: what the board shows."""
