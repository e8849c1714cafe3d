"""What the screens show, worked out without Textual: text, rows and figures from the model
(pure functions and plain data; the CLI formats with the same ones)."""
