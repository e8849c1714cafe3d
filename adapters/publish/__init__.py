"""Publishing forks: receipts, no-clobber forks, events."""
