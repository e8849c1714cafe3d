"""Configuration and where gobtui's files live: config.toml, homes, data and cache folders, dashboard state."""
