"""The owner's signed word on which seats may serve its table at a relay in its place (net/table/succession.py).

    deputies {owner: bin32, keys: [bin32], proof: bin64}
    proof: the owner's Ed25519 signature of LABEL ‖ table ‖ owner ‖ the keys, sorted and concatenated

The owner signs it once every seat has joined (the keys: every seat's but its own) and gives it to the
relay (`deputies`, and inside every `serve`: net/reach/relay_link.py) and to every seat (a control packet
tagged for that seat, net/table/host_packets.py). A relay that restarted, or lost it otherwise, hears it again
from whoever serves the table next: the owner, or a seat taking over with the copy it holds. So a
relay restarted while the host seat is away still lets a seat take over.

A relay takes a list only under the table's owner key: for a table it knows, the key that first
served it; for one it does not know since it started, the list's signer, who becomes its owner as a
first serve's key would. A seat keeps a list only if its invite's owner key signed it for this table,
and shows it only if it names exactly the other seats of its log (`fits`), so never one that lets a
stranger in.
"""

from __future__ import annotations

from dicetable.net.identity import verify_signature

LABEL = b"dicetable/deputies/v1\x00"
MAX_KEYS = 15  # a table has at most 16 seats, the owner's among them
FIELDS = frozenset({"owner", "keys", "proof"})


def signed_bytes(table: bytes, owner: bytes, keys) -> bytes:
    return LABEL + table + owner + b"".join(sorted(keys))


def seats_of(replica) -> frozenset[bytes]:
    """The keys the owner names: every seated key but the opener's."""
    return frozenset(info.key for info in replica.seats if info is not None and info.key != replica.opener)


def sign(profile, table: bytes, keys) -> dict:
    """The owner's list naming `keys` for `table`."""
    keys = sorted(keys)
    return {"owner": profile.public_key, "keys": keys, "proof": profile.sign(signed_bytes(table, profile.public_key, keys))}


def read(listing, table: bytes) -> tuple[bytes, frozenset[bytes]] | None:
    """The signer and the keys of a list for `table`, or None when it is malformed or not signed for it."""
    if type(listing) is not dict or set(listing) != FIELDS:
        return None
    owner, keys, proof = listing["owner"], listing["keys"], listing["proof"]
    if type(owner) is not bytes or len(owner) != 32 or type(proof) is not bytes or len(proof) != 64:
        return None
    if type(keys) is not list or len(keys) > MAX_KEYS or any(type(k) is not bytes or len(k) != 32 for k in keys):
        return None
    if not verify_signature(owner, signed_bytes(table, owner, keys), proof):
        return None
    return owner, frozenset(keys)


def fits(listing, replica, owner: bytes) -> bool:
    """A seat's check: the list is `owner`'s (its invite's key) for its table and names exactly its other seats."""
    named = read(listing, replica.table)
    return named is not None and named[0] == owner and replica.phase not in ("new", "joining") \
        and named[1] == seats_of(replica)
