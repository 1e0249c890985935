"""Trust boundaries: who a request is for (tenants), what it may see (clearance levels), and
the :class:`Reader` value that carries both."""

from ratified_rdf.trust.clearance import (
    Clearance,
    ClearanceError,
    RedactionPolicy,
    can_read,
    readable_levels,
)
from ratified_rdf.trust.reader import Reader, default_actor
from ratified_rdf.trust.tenants import (
    DEFAULT_TENANT_ID,
    MAX_RAW_TENANT_ID_LENGTH,
    MAX_TENANT_ID_LENGTH,
    RESERVED_TENANT_IDS,
    TENANT_ID_MESSAGES,
    TENANT_ID_PATTERN,
    TenantId,
    TenantIdError,
    TenantIdRule,
    validate_tenant_id,
)

__all__ = [
    "DEFAULT_TENANT_ID",
    "MAX_RAW_TENANT_ID_LENGTH",
    "MAX_TENANT_ID_LENGTH",
    "RESERVED_TENANT_IDS",
    "TENANT_ID_MESSAGES",
    "TENANT_ID_PATTERN",
    "Clearance",
    "ClearanceError",
    "Reader",
    "RedactionPolicy",
    "TenantId",
    "TenantIdError",
    "TenantIdRule",
    "can_read",
    "default_actor",
    "readable_levels",
    "validate_tenant_id",
]
