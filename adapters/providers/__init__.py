"""One package per provider (state, items, parse, rewrite half) behind the registry, and what they share."""
