"""Applying a plan to a transcript's bytes, and the source's lines kept for candidates."""
