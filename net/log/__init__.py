"""The table's log: signed frames (wire), their hash chain (links), the replica that checks each frame
in log order (replica, with a part per kind of frame: membership, play, sealing, claims, rematch; and
what they log: records), the transcript file (transcript) and `dicetable verify` (verify)."""
