"""The deterministic stream that expands an event seed into uniform values (FAIRNESS.md §1).

HMAC-SHA256 in counter mode: block i = HMAC-SHA256(key = seed, msg = DOMAIN ‖ i as 8 bytes
big-endian), blocks concatenated, bytes consumed in order. `below(n)` takes the fewest whole bytes
that hold n - 1, masks to its bit length and rejects values >= n (never `%`, which biases small
values); `below(1)` consumes nothing.
"""

from __future__ import annotations

import hmac

DOMAIN = b"dicetable/drbg/v1"


class DRBG:
    def __init__(self, seed: bytes) -> None:
        if len(seed) != 32:
            raise ValueError("a DRBG seed is 32 bytes")
        self.seed = seed
        self.counter = 0
        self.buffer = b""

    def read(self, n: int) -> bytes:
        while len(self.buffer) < n:
            block = hmac.digest(self.seed, DOMAIN + self.counter.to_bytes(8, "big"), "sha256")
            self.buffer += block
            self.counter += 1
        out, self.buffer = self.buffer[:n], self.buffer[n:]
        return out

    def below(self, n: int) -> int:
        """A uniform integer in range(n), by masking and rejection."""
        if type(n) is not int or n < 1:
            raise ValueError(f"below() needs a positive integer, not {n!r}")
        if n == 1:
            return 0
        bits = (n - 1).bit_length()
        size = (bits + 7) // 8
        mask = (1 << bits) - 1
        while True:
            value = int.from_bytes(self.read(size), "big") & mask
            if value < n:
                return value
