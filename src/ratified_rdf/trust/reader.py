"""``Reader``: who reads a brain, in one value: tenant, clearance, redaction policy and actor."""

from __future__ import annotations

import getpass
from dataclasses import dataclass

from ratified_rdf.trust.clearance import Clearance, RedactionPolicy
from ratified_rdf.trust.tenants import TenantId


def default_actor() -> str:
    """Who is calling, when no one says: the login name of the process."""
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "unknown"


@dataclass(frozen=True, init=False)
class Reader:
    """One reader of a brain: which tenant's brains it may see (``tenant``), how sensitive
    the evidence it may read is (``clearance``), what an answer may say about evidence above
    that (``redaction``), and who the audit log says asked (``actor``).

    Every field has a safe default: the default tenant, public clearance, silence about
    what is withheld, the login name. Text is accepted for each and parsed here, so a
    misspelt level or tenant fails with :class:`~ratified_rdf.trust.ClearanceError` or
    :class:`~ratified_rdf.trust.TenantIdError` naming the mistake, before any store is
    opened. (A frozen dataclass rather than a pydantic model: pydantic would wrap those
    errors in its own.)
    """

    tenant: TenantId
    clearance: Clearance
    redaction: RedactionPolicy
    actor: str

    def __init__(
        self,
        tenant: TenantId | str | None = None,
        clearance: Clearance | str = Clearance.PUBLIC,
        redaction: RedactionPolicy | str = RedactionPolicy.SILENT,
        actor: str | None = None,
    ) -> None:
        # Set through object: the value is frozen once made.
        object.__setattr__(
            self, "tenant", TenantId.default() if tenant is None else TenantId(tenant)
        )
        object.__setattr__(self, "clearance", Clearance.parse(clearance))
        object.__setattr__(self, "redaction", RedactionPolicy.parse(redaction))
        object.__setattr__(self, "actor", actor or default_actor())

    @classmethod
    def builder(cls, actor: str | None = None) -> Reader:
        """The reader a build reads as: it saw every source, so restricted clearance."""
        return cls(clearance=Clearance.RESTRICTED, actor=actor)

    def but(
        self,
        *,
        tenant: TenantId | str | None = None,
        clearance: Clearance | str | None = None,
        redaction: RedactionPolicy | str | None = None,
        actor: str | None = None,
    ) -> Reader:
        """This reader with the fields given changed: ``reader.but(clearance="public")``."""
        return Reader(
            tenant=self.tenant if tenant is None else tenant,
            clearance=self.clearance if clearance is None else clearance,
            redaction=self.redaction if redaction is None else redaction,
            actor=actor or self.actor,
        )
