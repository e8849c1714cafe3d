"""Lifecycle hooks' side effects: the providers' hook settings files, and the hook calls."""
