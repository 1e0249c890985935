"""A tamper-evident audit log built on standards.

Records are frozen pydantic models whose RFC 8785 canonical JSON is both their line in
``records.jsonl`` and their Merkle leaf; the tree is RFC 9162's (RFC 6962's) with its
inclusion and consistency proofs; tree heads are signed with Ed25519 and numbered, and cover
only records a holder of the key vouched for as it wrote them (a line anyone else appends is
reported, never signed); ``verify_log`` checks a log with nothing but its files and its
public key; anchors (a witness directory, a transparency service over HTTP) keep tree heads
outside the log, and ``verify_log`` checks the log against the tree head a witness last saw.
``capture`` wraps an operation so that it is recorded before it runs and its outcome after;
``PeriodicSigner`` signs a long-running process's tree heads as it goes. The signing key
lives outside the log's folder (``$RATIFIED_AUDIT_KEY``).
"""

from ratified_rdf.audit.anchor import Anchor, Anchoring, ConsistencyProver, Receipt
from ratified_rdf.audit.calls import CallAudit, audit_dir, audit_folder, remote_audit_dir
from ratified_rdf.audit.capture import capture
from ratified_rdf.audit.errors import (
    AnchorRejected,
    AnchorStateError,
    AnchorUnreachable,
    AuditError,
)
from ratified_rdf.audit.http_anchor import HttpTransparencyAnchor
from ratified_rdf.audit.lifecycle import AnchorState, check_transition
from ratified_rdf.audit.log import (
    KEY_ENV,
    PRIVATE_KEY_FILE,
    PUBLIC_KEY_FILE,
    RECORDS_FILE,
    TREE_HEADS_FILE,
    AuditLog,
)
from ratified_rdf.audit.merkle import (
    EMPTY_ROOT,
    MerkleTree,
    leaf_hash,
    node_hash,
    verify_consistency,
    verify_inclusion,
)
from ratified_rdf.audit.records import (
    AnchorSidecar,
    AuditRecord,
    Clearance,
    DetailSidecar,
    Kind,
    LogEntry,
    OutcomeSidecar,
    canonical_bytes,
    parse_entry,
)
from ratified_rdf.audit.signer import (
    DEFAULT_INTERVAL_S,
    DEFAULT_MAX_UNSIGNED,
    PeriodicSigner,
    stop_on_sigterm,
)
from ratified_rdf.audit.signing import (
    SignedTreeHead,
    generate_key,
    key_id,
    load_private_key,
    load_public_key,
    save_private_key,
    save_public_key,
    sign_tree_head,
    verify_tree_head,
)
from ratified_rdf.audit.verify import VerificationReport, verify_log
from ratified_rdf.audit.witness import (
    LocalWitnessAnchor,
    WitnessedHead,
    last_seen,
    verify_cosignature,
)

__all__ = [
    "DEFAULT_INTERVAL_S",
    "DEFAULT_MAX_UNSIGNED",
    "EMPTY_ROOT",
    "KEY_ENV",
    "PRIVATE_KEY_FILE",
    "PUBLIC_KEY_FILE",
    "RECORDS_FILE",
    "TREE_HEADS_FILE",
    "Anchor",
    "AnchorRejected",
    "AnchorSidecar",
    "AnchorState",
    "AnchorStateError",
    "AnchorUnreachable",
    "Anchoring",
    "AuditError",
    "AuditLog",
    "AuditRecord",
    "CallAudit",
    "Clearance",
    "ConsistencyProver",
    "DetailSidecar",
    "HttpTransparencyAnchor",
    "Kind",
    "LocalWitnessAnchor",
    "LogEntry",
    "MerkleTree",
    "OutcomeSidecar",
    "PeriodicSigner",
    "Receipt",
    "SignedTreeHead",
    "VerificationReport",
    "WitnessedHead",
    "audit_dir",
    "audit_folder",
    "canonical_bytes",
    "capture",
    "check_transition",
    "generate_key",
    "key_id",
    "last_seen",
    "leaf_hash",
    "load_private_key",
    "load_public_key",
    "node_hash",
    "parse_entry",
    "remote_audit_dir",
    "save_private_key",
    "save_public_key",
    "sign_tree_head",
    "stop_on_sigterm",
    "verify_consistency",
    "verify_cosignature",
    "verify_inclusion",
    "verify_log",
    "verify_tree_head",
]
