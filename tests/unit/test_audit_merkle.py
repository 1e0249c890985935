"""The RFC 9162 Merkle tree against the published Certificate Transparency test vectors.

The leaves, roots, node hashes and proofs below are copied from transparency-dev/merkle
(the Go successor of the certificate-transparency and Trillian Merkle code):
``testonly/constants.go`` (LeafInputs, NodeHashes, RootHashes, EmptyRootHash) and
``proof/verify_test.go`` (inclusionProofs, consistencyProofs), commit
02194e9afb6c1d95b5381350007963aa70fff472. The Go file numbers leaves from 1; here they are
numbered from 0, as RFC 9162 does.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any, TypeVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ratified_rdf.audit import merkle
from ratified_rdf.audit.merkle import (
    EMPTY_ROOT,
    MerkleTree,
    leaf_hash,
    node_hash,
    verify_consistency,
    verify_inclusion,
)

T = TypeVar("T")

LEAVES = [
    bytes.fromhex(h)
    for h in (
        "",
        "00",
        "10",
        "2021",
        "3031",
        "40414243",
        "5051525354555657",
        "606162636465666768696a6b6c6d6e6f",
    )
]

# RootHashes(): index = tree size.
ROOTS = [
    bytes.fromhex(h)
    for h in (
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
        "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
        "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
        "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
        "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
        "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
        "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
        "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
    )
]

# NodeHashes()[0]: the leaf hashes.
LEAF_HASHES = [
    bytes.fromhex(h)
    for h in (
        "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
        "96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
        "0298d122906dcfc10892cb53a73992fc5b9f493ea4c9badb27b791b4127a7fe7",
        "07506a85fd9dd2f120eb694f86011e5bb4662e5c415a62917033d4a9624487e7",
        "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
        "4271a26be0d8a84f0bd54c8c302e7cb3a3b5d1fa6780a40bcce2873477dab658",
        "b08693ec2e721597130641e8211e7eedccb4c26413963eee6c1e2ed16ffb1a5f",
        "46f6ffadd3d06a09ff3c5860d2755c8b9819db7df44251788c7d8e3180de8eb1",
    )
]


def _hashes(*hexes: str) -> list[bytes]:
    return [bytes.fromhex(h) for h in hexes]


# inclusionProofs: (leaf index from 0, tree size, proof).
INCLUSION_VECTORS = [
    (0, 1, []),
    (
        0,
        8,
        _hashes(
            "96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
            "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4",
        ),
    ),
    (
        5,
        8,
        _hashes(
            "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
            "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
            "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
        ),
    ),
    (
        2,
        3,
        _hashes("fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125"),
    ),
    (
        1,
        5,
        _hashes(
            "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
            "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
        ),
    ),
]

# consistencyProofs: (old size, new size, proof).
CONSISTENCY_VECTORS = [
    (1, 1, []),
    (
        1,
        8,
        _hashes(
            "96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
            "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4",
        ),
    ),
    (
        6,
        8,
        _hashes(
            "0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
            "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
            "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
        ),
    ),
    (
        2,
        5,
        _hashes(
            "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
        ),
    ),
    (
        6,
        7,
        _hashes(
            "0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
            "b08693ec2e721597130641e8211e7eedccb4c26413963eee6c1e2ed16ffb1a5f",
            "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
        ),
    ),
]

SOME_HASH = bytes.fromhex("abacaba000000000000000000000000000000000000000000060061e00123456")


@pytest.fixture(scope="module")
def tree() -> MerkleTree:
    return MerkleTree(LEAVES)


def test_empty_tree_hash_is_sha256_of_nothing() -> None:
    assert MerkleTree().root() == EMPTY_ROOT == ROOTS[0]


def test_leaf_hashes_match_the_published_ones(tree: MerkleTree) -> None:
    assert [leaf_hash(leaf) for leaf in LEAVES] == LEAF_HASHES
    assert [tree.leaf_hash(i) for i in range(8)] == LEAF_HASHES


@pytest.mark.parametrize("size", range(9))
def test_roots_match_the_published_ones(tree: MerkleTree, size: int) -> None:
    assert tree.root(size) == ROOTS[size]


def test_growing_tree_has_the_published_root_at_every_size() -> None:
    growing = MerkleTree()
    for size, leaf in enumerate(LEAVES, start=1):
        assert growing.append(leaf) == size - 1
        assert growing.root() == ROOTS[size]


@pytest.mark.parametrize(("index", "size", "proof"), INCLUSION_VECTORS)
def test_inclusion_proofs_match_and_verify(
    tree: MerkleTree, index: int, size: int, proof: list[bytes]
) -> None:
    assert tree.inclusion_proof(index, size) == proof
    assert verify_inclusion(LEAF_HASHES[index], index, size, proof, ROOTS[size])


@pytest.mark.parametrize(("old", "new", "proof"), CONSISTENCY_VECTORS)
def test_consistency_proofs_match_and_verify(
    tree: MerkleTree, old: int, new: int, proof: list[bytes]
) -> None:
    assert tree.consistency_proof(old, new) == proof
    assert verify_consistency(old, new, ROOTS[old], ROOTS[new], proof)


def _flip(proof: list[bytes], at: int) -> list[bytes]:
    changed = bytearray(proof[at])
    changed[0] ^= 8
    return [*proof[:at], bytes(changed), *proof[at + 1 :]]


@pytest.mark.parametrize(("index", "size", "proof"), INCLUSION_VECTORS[1:])
def test_tampered_inclusion_proofs_fail(index: int, size: int, proof: list[bytes]) -> None:
    leaf, root = LEAF_HASHES[index], ROOTS[size]
    probes = [
        (leaf, index - 1, size, proof, root),
        (leaf, index + 1, size, proof, root),
        (leaf, index ^ 2, size, proof, root),
        (leaf, index, size * 2, proof, root),
        (leaf, index, size // 2, proof, root),
        (leaf_hash(b"WrongLeaf"), index, size, proof, root),
        (leaf, index, size, proof, EMPTY_ROOT),
        (leaf, index, size, proof, SOME_HASH),
        (leaf, index, size, [*proof, b""], root),
        (leaf, index, size, [*proof, root], root),
        (leaf, index, size, [b"", *proof], root),
        (leaf, index, size, [root, *proof], root),
        (leaf, index, size, proof[:-1], root),
        (leaf, index, size, [proof[0], SOME_HASH, *proof[1:]], root),
    ]
    probes += [(leaf, index, size, _flip(proof, at), root) for at in range(len(proof))]
    for probe in probes:
        assert not verify_inclusion(*probe), probe


@pytest.mark.parametrize(("old", "new", "proof"), CONSISTENCY_VECTORS[1:])
def test_tampered_consistency_proofs_fail(old: int, new: int, proof: list[bytes]) -> None:
    root1, root2 = ROOTS[old], ROOTS[new]
    probes = [
        (old - 1, new, root1, root2, proof),
        (old + 1, new, root1, root2, proof),
        (old ^ 2, new, root1, root2, proof),
        (old, new * 2, root1, root2, proof),
        (old, new // 2, root1, root2, proof),
        (old, new, SOME_HASH, root2, proof),
        (old, new, root1, SOME_HASH, proof),
        (old, new, root2, root1, proof),
        (old, new, root1, root2, []),
        (old, new, root1, root2, [*proof, b""]),
        (old, new, root1, root2, [*proof, root1]),
        (old, new, root1, root2, [*proof, root2]),
        (old, new, root1, root2, [b"", *proof]),
        (old, new, root1, root2, [root1, *proof]),
        (old, new, root1, root2, [root2, *proof]),
        (old, new, root1, root2, [proof[0], *proof]),
        (old, new, root1, root2, proof[:-1]),
    ]
    probes += [(old, new, root1, root2, _flip(proof, at)) for at in range(len(proof))]
    for probe in probes:
        assert not verify_consistency(*probe), probe


def test_trivial_consistency_cases() -> None:
    assert verify_consistency(0, 0, EMPTY_ROOT, EMPTY_ROOT, [])
    assert verify_consistency(0, 5, EMPTY_ROOT, ROOTS[5], [])
    assert verify_consistency(3, 3, ROOTS[3], ROOTS[3], [])
    assert not verify_consistency(0, 5, ROOTS[1], ROOTS[5], [])
    assert not verify_consistency(3, 3, ROOTS[3], ROOTS[4], [])
    assert not verify_consistency(3, 3, ROOTS[3], ROOTS[3], [EMPTY_ROOT])
    assert not verify_consistency(0, 1, EMPTY_ROOT, ROOTS[1], [EMPTY_ROOT])
    assert not verify_consistency(2, 1, ROOTS[2], ROOTS[1], [])


def test_inclusion_fails_outside_the_tree() -> None:
    for index, size in ((0, 0), (1, 0), (2, 1), (1, 1)):
        assert not verify_inclusion(SOME_HASH, index, size, [], SOME_HASH)


def test_proof_requests_outside_the_tree_raise(tree: MerkleTree) -> None:
    with pytest.raises(ValueError, match="Leaf 8 is not in a tree of 8 leaves"):
        tree.inclusion_proof(8, 8)
    with pytest.raises(ValueError, match="has no tree head of size 9"):
        tree.root(9)
    with pytest.raises(ValueError, match="old size <= new size"):
        tree.consistency_proof(5, 3)


@pytest.fixture(scope="module")
def tree64() -> MerkleTree:
    return MerkleTree(i.to_bytes(2, "big") for i in range(64))


def _reference_root(leaves: list[bytes]) -> bytes:
    """MTH straight from the RFC's recursive definition, for comparison."""
    if not leaves:
        return EMPTY_ROOT
    if len(leaves) == 1:
        return leaf_hash(leaves[0])
    k = 1
    while k * 2 < len(leaves):
        k *= 2
    return node_hash(_reference_root(leaves[:k]), _reference_root(leaves[k:]))


def test_every_root_up_to_64_matches_the_rfc_definition(tree64: MerkleTree) -> None:
    leaves = [i.to_bytes(2, "big") for i in range(64)]
    for size in range(65):
        assert tree64.root(size) == _reference_root(leaves[:size])


def test_every_inclusion_proof_up_to_64_verifies(tree64: MerkleTree) -> None:
    for size in range(1, 65):
        root = tree64.root(size)
        for index in range(size):
            proof = tree64.inclusion_proof(index, size)
            assert verify_inclusion(tree64.leaf_hash(index), index, size, proof, root)


def test_every_consistency_proof_up_to_64_verifies(tree64: MerkleTree) -> None:
    for new in range(1, 65):
        for old in range(1, new + 1):
            proof = tree64.consistency_proof(old, new)
            assert verify_consistency(old, new, tree64.root(old), tree64.root(new), proof)


@settings(max_examples=200, deadline=None)
@given(
    size=st.integers(min_value=2, max_value=300),
    data=st.data(),
)
def test_a_flipped_bit_anywhere_in_a_proof_fails(size: int, data: st.DataObject) -> None:
    tree = MerkleTree(i.to_bytes(4, "big") for i in range(size))
    index = data.draw(st.integers(min_value=0, max_value=size - 1))
    proof = tree.inclusion_proof(index, size)
    at = data.draw(st.integers(min_value=0, max_value=len(proof) - 1))
    bit = data.draw(st.integers(min_value=0, max_value=255))
    changed = bytearray(proof[at])
    changed[bit // 8] ^= 1 << (bit % 8)
    tampered = [*proof[:at], bytes(changed), *proof[at + 1 :]]
    assert verify_inclusion(tree.leaf_hash(index), index, size, proof, tree.root())
    assert not verify_inclusion(tree.leaf_hash(index), index, size, tampered, tree.root())


@settings(max_examples=200, deadline=None)
@given(
    leaves=st.lists(st.binary(max_size=8), min_size=1, max_size=200),
    data=st.data(),
)
def test_consistency_between_any_two_sizes_verifies(
    leaves: list[bytes], data: st.DataObject
) -> None:
    tree = MerkleTree(leaves)
    new = data.draw(st.integers(min_value=1, max_value=len(leaves)))
    old = data.draw(st.integers(min_value=0, max_value=new))
    proof = tree.consistency_proof(old, new)
    assert tree.root(new) == _reference_root(leaves[:new])
    assert verify_consistency(old, new, tree.root(old), tree.root(new), proof)
    if 0 < old < new:
        assert not verify_consistency(old, new, tree.root(old), SOME_HASH, proof)


def test_100k_leaves_append_and_prove_hashing_little(monkeypatch: pytest.MonkeyPatch) -> None:
    # The work is hashing, counted: at most two hashes a leaf to append (its own and, amortised,
    # one parent), and a tree head or proof needs at most a hash or two per level of the tree.
    hashes = 0

    def sha256(data: bytes = b"") -> hashlib._Hash:
        nonlocal hashes
        hashes += 1
        return hashlib.sha256(data)

    def counted(call: Callable[..., T], *args: Any) -> tuple[T, int]:
        nonlocal hashes
        hashes = 0
        return call(*args), hashes

    monkeypatch.setattr(merkle, "hashlib", SimpleNamespace(sha256=sha256))
    n = 100_000
    depth = (n - 1).bit_length()
    tree = MerkleTree()
    _, appending = counted(lambda: [tree.append(i.to_bytes(4, "big")) for i in range(n)])
    assert n < appending <= 2 * n
    root, work = counted(tree.root)
    assert work <= depth
    for index in range(0, n, 97):
        proof, work = counted(tree.inclusion_proof, index)
        assert work <= depth
        ok, work = counted(verify_inclusion, tree.leaf_hash(index), index, n, proof, root)
        assert ok and work <= depth
    for old in range(1, n, 9_973):
        proof, work = counted(tree.consistency_proof, old)
        assert work <= depth
        old_root, work = counted(tree.root, old)
        assert work <= depth
        ok, work = counted(verify_consistency, old, n, old_root, root, proof)
        assert ok and work <= 2 * depth
