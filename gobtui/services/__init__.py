"""The headless services the dashboard and the CLI share: each session's policy (and the adaptive
tuner), planning a loaded session, the forks gobtui published, and the watch."""
