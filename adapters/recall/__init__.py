"""Budgeted recall's side effects: the vault's cards indexed once per snapshot, and the delta
cursors kept per (caller, session)."""
