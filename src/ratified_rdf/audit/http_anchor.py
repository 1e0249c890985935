"""``HttpTransparencyAnchor``: post signed tree heads to a transparency service over HTTP."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ratified_rdf.audit.anchor import ConsistencyProver, Receipt
from ratified_rdf.audit.errors import AnchorRejected, AnchorUnreachable, AuditError
from ratified_rdf.audit.records import canonical_bytes, canonical_json
from ratified_rdf.audit.signing import SignedTreeHead

if TYPE_CHECKING:
    # httpx is imported when a tree head is posted: every reader imports the audit package.
    import httpx


class HttpTransparencyAnchor:
    """Posts each tree head (its canonical JSON) to a transparency service; expects a receipt.

    A 2xx answer must be a JSON object: the receipt. Network errors, time-outs, 5xx, 408 and
    429 mean "try again later"; any other answer is a refusal. ``transport`` replaces the
    network (for tests, ``httpx.MockTransport``).
    """

    def __init__(
        self,
        url: str,
        *,
        name: str = "http",
        timeout: float = 10.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.url = url
        self._name = name
        self._timeout = timeout
        self._transport = transport

    @property
    def name(self) -> str:
        """The anchor's name in the log's anchoring steps."""
        return self._name

    def submit(self, sth: SignedTreeHead, prove: ConsistencyProver) -> Receipt:
        """POST ``sth`` and return the service's receipt (``prove`` is not needed here)."""
        import httpx

        try:
            with httpx.Client(transport=self._transport, timeout=self._timeout) as client:
                response = client.post(
                    self.url,
                    content=canonical_bytes(sth),
                    headers={"content-type": "application/json"},
                )
        except httpx.TransportError as exc:
            raise AnchorUnreachable(
                f"The transparency service at {self.url} could not be reached ({exc}); "
                "the anchoring is retried later."
            ) from exc
        status = response.status_code
        if status >= 500 or status in (408, 429):
            raise AnchorUnreachable(
                f"The transparency service at {self.url} answered {status}; the anchoring "
                "is retried later."
            )
        if not response.is_success:
            raise AnchorRejected(
                f"The transparency service at {self.url} refused the tree head of size "
                f"{sth.tree_size} with {status}: {response.text[:200]}. Check the URL and "
                "what the service expects."
            )
        try:
            receipt = response.json()
        except ValueError:
            receipt = None
        if not isinstance(receipt, dict):
            raise AnchorRejected(
                f"The transparency service at {self.url} answered {status} without a JSON "
                "object receipt. Check that the URL is the service's submission endpoint."
            )
        try:
            # The receipt goes into the log, whose lines must be canonical JSON.
            canonical_json(receipt, "receipt")
        except AuditError as exc:
            raise AnchorRejected(
                f"The transparency service at {self.url} sent a receipt the log cannot keep. {exc}"
            ) from exc
        return receipt
