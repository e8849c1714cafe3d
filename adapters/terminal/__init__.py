"""The terminal gobtui runs in: the client processes behind a session (read from /proc) and the
tmux server around them (jump to a session's pane, show a message in the status line)."""
