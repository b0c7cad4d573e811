"""Extraction: episodes in, candidate MemoryDeltas out (the model proposes, the ledger decides)."""
