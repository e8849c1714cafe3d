"""Genuine data only: the sessions the real Claude Code wrote when driven offline (driven/, see
its README) and the spec's sample config, byte for byte. Transcripts the project builds in
code live in tests/builders, so a built one is never taken for a client's own file."""
