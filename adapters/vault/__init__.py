"""The content-addressed snapshot vault."""
