"""The app's controllers: what drives the dashboard between its screens and the services (apply
and undo, auto-prepare, the command palette's providers) and the messages they post. Textual,
but no screen of the app: they sit below the screens, which reach them."""
