"""The Merkle tree of RFC 9162 §2.1 (unchanged from RFC 6962 §2.1): hashes, proofs and verifiers.

SHA-256 throughout; a leaf hashes as ``H(0x00 || leaf)`` and an inner node as
``H(0x01 || left || right)``; a tree of ``n > 1`` leaves splits at the largest power of two
strictly below ``n``, so an odd node is never duplicated; the empty tree's hash is ``H()``.

Every subtree the RFC's recursion visits starts at a multiple of its own size rounded up to a
power of two, so each power-of-two subtree it meets is complete and never changes once its
last leaf is in. ``MerkleTree`` keeps those complete subtrees level by level as leaves arrive,
which makes an append amortised O(1) and a root or proof O(log² n) hashes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence

HASH_SIZE = 32
"""Bytes in a SHA-256 hash."""
EMPTY_ROOT = hashlib.sha256(b"").digest()
"""MTH({}): the hash of the empty tree."""


def leaf_hash(leaf: bytes) -> bytes:
    """The hash of one leaf: ``SHA-256(0x00 || leaf)``."""
    return hashlib.sha256(b"\x00" + leaf).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    """The hash of an inner node: ``SHA-256(0x01 || left || right)``."""
    return hashlib.sha256(b"\x01" + left + right).digest()


def _split(n: int) -> int:
    """The largest power of two strictly smaller than ``n`` (for ``n > 1``)."""
    return 1 << ((n - 1).bit_length() - 1)


def _is_power_of_two(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


class MerkleTree:
    """An append-only RFC 9162 Merkle tree over leaf byte strings; it stores hashes only."""

    def __init__(self, leaves: Iterable[bytes] = ()) -> None:
        # _levels[h][i] is the hash of the complete subtree of 2**h leaves starting at i * 2**h.
        self._levels: list[list[bytes]] = [[]]
        for leaf in leaves:
            self.append(leaf)

    @property
    def size(self) -> int:
        """How many leaves the tree holds."""
        return len(self._levels[0])

    def append(self, leaf: bytes) -> int:
        """Add ``leaf`` at the end and return its index."""
        index = self.size
        self._levels[0].append(leaf_hash(leaf))
        position, height = index, 0
        while position & 1:
            level = self._levels[height]
            parent = node_hash(level[position - 1], level[position])
            if height + 1 == len(self._levels):
                self._levels.append([])
            self._levels[height + 1].append(parent)
            position >>= 1
            height += 1
        return index

    def leaf_hash(self, index: int) -> bytes:
        """The stored hash of leaf ``index``."""
        self._check_index(index, self.size)
        return self._levels[0][index]

    def root(self, size: int | None = None) -> bytes:
        """MTH of the first ``size`` leaves (all of them by default)."""
        size = self._check_size(size)
        return self._subtree(0, size) if size else EMPTY_ROOT

    def inclusion_proof(self, index: int, size: int | None = None) -> list[bytes]:
        """The audit path PATH(index, D[0:size]) of RFC 9162 §2.1.3.1."""
        size = self._check_size(size)
        self._check_index(index, size)
        return self._path(index, 0, size)

    def consistency_proof(self, old_size: int, new_size: int | None = None) -> list[bytes]:
        """PROOF(old_size, D[0:new_size]) of RFC 9162 §2.1.4.1; empty when nothing needs proving.

        The RFC defines the proof for ``0 < old_size < new_size``; for an empty old tree or
        equal sizes the proof is the empty list, which ``verify_consistency`` accepts.
        """
        new_size = self._check_size(new_size)
        if not 0 <= old_size <= new_size:
            raise ValueError(
                f"A consistency proof needs 0 <= old size <= new size, not {old_size} and "
                f"{new_size}: ask for the proof from the older tree head to the newer one."
            )
        if old_size in (0, new_size):
            return []
        return self._subproof(old_size, 0, new_size, complete=True)

    def _subtree(self, start: int, size: int) -> bytes:
        """MTH(D[start:start+size]) for a subtree that the RFC's recursion can visit."""
        if _is_power_of_two(size):
            height = size.bit_length() - 1
            return self._levels[height][start >> height]
        k = _split(size)
        return node_hash(self._subtree(start, k), self._subtree(start + k, size - k))

    def _path(self, index: int, start: int, size: int) -> list[bytes]:
        if size == 1:
            return []
        k = _split(size)
        if index < k:
            return [*self._path(index, start, k), self._subtree(start + k, size - k)]
        return [*self._path(index - k, start + k, size - k), self._subtree(start, k)]

    def _subproof(self, old: int, start: int, size: int, *, complete: bool) -> list[bytes]:
        # ``complete`` is the RFC's flag b: the old tree is this very subtree, so the verifier
        # already knows its hash and the proof leaves it out.
        if old == size:
            return [] if complete else [self._subtree(start, size)]
        k = _split(size)
        if old <= k:
            return [
                *self._subproof(old, start, k, complete=complete),
                self._subtree(start + k, size - k),
            ]
        return [
            *self._subproof(old - k, start + k, size - k, complete=False),
            self._subtree(start, k),
        ]

    def _check_size(self, size: int | None) -> int:
        if size is None:
            return self.size
        if not 0 <= size <= self.size:
            raise ValueError(
                f"The tree has {self.size} leaves, so it has no tree head of size {size}: "
                "ask for a size between 0 and the current size."
            )
        return size

    @staticmethod
    def _check_index(index: int, size: int) -> None:
        if not 0 <= index < size:
            raise ValueError(
                f"Leaf {index} is not in a tree of {size} leaves: "
                "leaf indexes start at 0 and stay below the tree size."
            )


def _hashes_well_formed(*hashes: bytes) -> bool:
    return all(len(h) == HASH_SIZE for h in hashes)


def verify_inclusion(
    leaf_hash: bytes, index: int, size: int, proof: Sequence[bytes], root: bytes
) -> bool:
    """Whether ``proof`` shows leaf ``index`` with ``leaf_hash`` in the tree ``(size, root)``.

    RFC 9162 §2.1.3.2, step by step; malformed hashes (not 32 bytes) fail too.
    """
    if not _hashes_well_formed(leaf_hash, root, *proof):
        return False
    if not 0 <= index < size:
        return False
    fn, sn, r = index, size - 1, leaf_hash
    for p in proof:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            r = node_hash(p, r)
            while fn and not fn & 1:
                fn >>= 1
                sn >>= 1
        else:
            r = node_hash(r, p)
        fn >>= 1
        sn >>= 1
    return sn == 0 and r == root


def verify_consistency(
    old_size: int, new_size: int, old_root: bytes, new_root: bytes, proof: Sequence[bytes]
) -> bool:
    """Whether ``proof`` shows the tree ``(new_size, new_root)`` extends ``(old_size, old_root)``.

    RFC 9162 §2.1.4.2 for ``0 < old_size < new_size``. Outside that range nothing needs
    proving: the proof must be empty, equal sizes need equal roots, and an empty old tree
    must have the empty tree's hash.
    """
    if not _hashes_well_formed(old_root, new_root, *proof):
        return False
    if not 0 <= old_size <= new_size:
        return False
    if old_size == 0:
        return not proof and old_root == EMPTY_ROOT
    if old_size == new_size:
        return not proof and old_root == new_root
    if not proof:
        return False
    path = [old_root, *proof] if _is_power_of_two(old_size) else list(proof)
    fn, sn = old_size - 1, new_size - 1
    while fn & 1:
        fn >>= 1
        sn >>= 1
    fr = sr = path[0]
    for c in path[1:]:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            fr = node_hash(c, fr)
            sr = node_hash(c, sr)
            while fn and not fn & 1:
                fn >>= 1
                sn >>= 1
        else:
            sr = node_hash(sr, c)
        fn >>= 1
        sn >>= 1
    return fr == old_root and sr == new_root and sn == 0
