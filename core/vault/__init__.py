"""The snapshot vault's pure model, by concern: errors (codes and input checks), index
(manifests, index entries, reading index.jsonl), streams (a snapshot's identity and
retention), reports (the answers' shapes) and records (the rules over a snapshot's records).
adapters.vault does the files."""
