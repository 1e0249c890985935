"""Who a request reads as: bearer tokens mapped to readers (tenant, clearance, redaction).

The access file is TOML, one ``[[reader]]`` per token; only the token's SHA-256 is stored, so
the file can sit beside the store without handing out the tokens themselves::

    [[reader]]
    name = "alice"                       # the actor the audit log records
    token_sha256 = "9f86d0…"             # sha256 of the token, hex
    tenant = "default"
    clearance = "internal"
    redaction = "silent"                 # optional; or "acknowledge"

A request without a token reads as the anonymous reader: the served brain's own (public
clearance unless the server was started otherwise). A token that is not listed is refused.
"""

from __future__ import annotations

import hashlib
import hmac
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from ratified_rdf.records.manifest import read_toml_record
from ratified_rdf.trust import Clearance, TenantId


class ReaderGrant(BaseModel):
    """One token's reader."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: Annotated[str, Field(min_length=1, max_length=100, pattern=r"^[\w .@-]+$")]
    token_sha256: Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]
    tenant: TenantId = TenantId.default()
    clearance: Clearance = Clearance.PUBLIC
    redaction: Literal["silent", "acknowledge"] = "silent"


class AccessList(BaseModel):
    """Every token the server accepts."""

    model_config = ConfigDict(frozen=True, extra="forbid", hide_input_in_errors=True)

    reader: tuple[ReaderGrant, ...] = ()

    def grant_for(self, token: str) -> ReaderGrant | None:
        """The reader ``token`` stands for, compared in constant time; None if unknown."""
        digest = hashlib.sha256(token.encode()).hexdigest()
        found = None
        for grant in self.reader:
            if hmac.compare_digest(grant.token_sha256, digest):
                found = grant
        return found


def load_access(path: Path) -> AccessList:
    """Read an access file (see the module docstring); errors name the file and the field."""
    return read_toml_record(path, AccessList, "an access list")


def token_digest(token: str) -> str:
    """What to write as ``token_sha256`` for ``token``."""
    return hashlib.sha256(token.encode()).hexdigest()
