"""The table's log: signed frames (wire), their hash chain (links), the replica that checks each frame
in log order (replica), the transcript file (transcript) and `dicetable verify` (verify)."""
