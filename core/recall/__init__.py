"""Budgeted recall at session boundaries: a context pack for named entities (pack), and a
delta of what changed in one session since its caller last asked (delta).

Both read what the vault and events.jsonl hold (the state cards gobtui wrote into its forks,
the snapshots, the apply and undo events), across both providers, and pack it into a token
budget, reporting what they used and what they left out. The `text` an agent injects is
rendered from exactly the packed items, so it honours the same budget.

World-only by default: a card's goal quotes the user's prompt, and a transcript path names
their home and project, so both stay out unless a trusted local caller asks
(`include_private`), and then every arm widens together.

Pure: the adapter (adapters.recall) hands in the archive, the stored cursor and `now`.
"""
