"""Everything that touches the outside world: files, provider formats, cache, watcher."""
