"""Randomness no seat decides alone: each seat's reveal chain (reveal_chain), event seeds and the
outcomes drawn from them (outcomes, drbg), and sealed answers (seal). FAIRNESS.md §1."""
