"""The file helpers every capability uses: no-clobber writes, private folders, JSON lines, times."""
