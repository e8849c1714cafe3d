"""The modal dialogs (confirm, error) any screen or controller may open: they know nothing of
the app, so a controller can ask a question without importing the screens above it."""
