"""The headless services the dashboard and the CLI share: a run's settings, each session's
policy (and the adaptive tuner), planning a loaded session and settling an apply, the forks
gobtui published, the watch, config.toml read again, and resuming a session in its client."""
