"""The ledger: usage rows, their tables and writer, and what is read back (report, export, compare)."""
