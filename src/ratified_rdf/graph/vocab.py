"""Namespaces, IRI minting and public URLs: the one place that decides what things are called.

Terms come from W3C vocabularies where they fit (PROV-O, DCTerms, FOAF, VoID, SIOC); the
``rr:`` namespace holds only what those lack. Data IRIs are stable functions of public names
(draft name, revision number, section number), so rebuilding a brain mints the same IRIs.
"""

from __future__ import annotations

import hashlib
import re
from functools import lru_cache
from urllib.parse import quote

from pyoxigraph import NamedNode

from ratified_rdf.trust import TenantId

BASE = "https://w3id.org/ratified-rdf/"
RR = BASE + "ontology#"
ID = BASE + "id/"

PROV = "http://www.w3.org/ns/prov#"
DCTERMS = "http://purl.org/dc/terms/"
FOAF = "http://xmlns.com/foaf/0.1/"
VOID = "http://rdfs.org/ns/void#"
DCAT = "http://www.w3.org/ns/dcat#"
SIOC = "http://rdfs.org/sioc/ns#"
RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
RDFS = "http://www.w3.org/2000/01/rdf-schema#"
XSD = "http://www.w3.org/2001/XMLSchema#"
OWL = "http://www.w3.org/2002/07/owl#"

PREFIXES = {
    "rr": RR,
    "prov": PROV,
    "dcterms": DCTERMS,
    "foaf": FOAF,
    "void": VOID,
    "dcat": DCAT,
    "sioc": SIOC,
    "rdf": RDF,
    "rdfs": RDFS,
    "xsd": XSD,
    "owl": OWL,
}

DATATRACKER = "https://datatracker.ietf.org/doc/"
RFC_EDITOR = "https://www.rfc-editor.org/rfc/"


@lru_cache(maxsize=4096)
def term(prefixed: str) -> NamedNode:
    """``rr:Section`` → the NamedNode of that term (kept: a build asks for one per triple it
    maps, and making the node costs ten times the lookup)."""
    prefix, local = prefixed.split(":", 1)
    return NamedNode(PREFIXES[prefix] + local)


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "untitled"


def brain_iri(tenant: TenantId, brain_id: str) -> str:
    """A tenant's brain, as a dataset."""
    return f"{ID}tenant/{tenant}/brain/{brain_id}"


def tenant_graphs(tenant: TenantId) -> str:
    """The prefix every named graph of ``tenant`` starts with; no other tenant's does."""
    return f"{ID}tenant/{tenant}/graph/"


def document_iri(name: str) -> str:
    """A draft series (``draft-ietf-tls-tls13``) or an RFC (``rfc8446``)."""
    return f"{ID}doc/{quote(name)}"


def revision_iri(draft: str, number: str) -> str:
    """Revision ``number`` of ``draft``."""
    return f"{document_iri(draft)}/{number}"


def section_iri(document: str, number: str | None, heading: str) -> str:
    """A section of a revision or RFC, by its number (unnumbered ones by heading)."""
    key = number if number else f"u-{_slug(heading)}"
    return f"{document}/section/{quote(key)}"


def alignment_iri(section: str, target_rfc: str) -> str:
    """The record that ``section`` aligns with a section of ``target_rfc``."""
    return f"{section}/aligns-to/{quote(target_rfc)}"


def commit_iri(repository: str, commit: str) -> str:
    """A commit of the source repository, by its id in the public repository."""
    return f"{ID}repo/{_slug(repository)}/commit/{commit}"


def repository_iri(repository: str) -> str:
    """The source repository."""
    return f"{ID}repo/{_slug(repository)}"


def person_iri(name: str) -> str:
    """A person, by the name documents give them."""
    return f"{ID}person/{_slug(name)}"


def run_iri(run_id: str) -> str:
    """An ingest run."""
    return f"{ID}run/{run_id}"


def graph_iri(tenant: TenantId, brain_id: str, run_id: str, source: str) -> str:
    """The named graph one ingest run wrote for one source."""
    return f"{tenant_graphs(tenant)}{brain_id}/{run_id}/{source}"


def catalog_graph(tenant: TenantId, brain_id: str) -> str:
    """The graph that says which run is current, what each run wrote and at what clearance."""
    return f"{tenant_graphs(tenant)}{brain_id}/catalog"


def reviews_graph(tenant: TenantId, brain_id: str, level: str) -> str:
    """The graph of reviews written by readers cleared for ``level``: kept across runs, never
    rebuilt, and read only by readers cleared for that level."""
    return f"{tenant_graphs(tenant)}{brain_id}/reviews-{level}"


def card_iri(key: str) -> str:
    """An answer card, by the hash of what it is about."""
    return f"{ID}card/{key}"


def review_iri(review_id: str) -> str:
    """One review of a card or claim."""
    return f"{ID}review/{review_id}"


def reviewer_iri(name: str) -> str:
    """A reviewer, by name: a slug to read, then a hash of the exact name, so two names never
    share an IRI ("Dana Reviewer" and "dana reviewer", or two names in a script the slug drops
    would otherwise be one reviewer with two names)."""
    digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return f"{ID}reviewer/{_slug(name)[:60].strip('-')}-{digest}"


def clearance_iri(level: str) -> str:
    """A clearance level (``public`` … ``restricted``) as an individual of the ontology."""
    return f"{RR}clearance-{level}"


def rule_iri(rule: str) -> str:
    """An alignment rule (a prov:Plan)."""
    return f"{RR}rule-{rule}"


def draft_url(name: str) -> str:
    """Datatracker page of a draft series."""
    return f"{DATATRACKER}{name}/"


def revision_url(draft: str, number: str) -> str:
    """Datatracker page of one revision."""
    return f"{DATATRACKER}{draft}/{number}/"


def fragment(number: str | None) -> str:
    """The HTML fragment xml2rfc gives a numbered section or appendix."""
    if not number:
        return ""
    return f"#appendix-{number}" if number[0].isalpha() else f"#section-{number}"


def revision_section_url(draft: str, number: str, section_number: str | None) -> str:
    """The section in the datatracker HTML rendering of the revision."""
    return f"{DATATRACKER}html/{draft}-{number}{fragment(section_number)}"


def rfc_url(rfc: str) -> str:
    """RFC Editor page of an RFC (``rfc8446``)."""
    return f"{RFC_EDITOR}{rfc}"


def rfc_section_url(rfc: str, section_number: str | None) -> str:
    """The section on the RFC Editor's HTML rendering."""
    return f"{RFC_EDITOR}{rfc}{fragment(section_number)}"


def commit_url(repository: str, commit: str) -> str:
    """A commit on the public repository host."""
    return f"{repository.rstrip('/')}/commit/{commit}"


def thread_iri(repository: str, number: int) -> str:
    """A GitHub issue or pull request (they share one number space)."""
    return f"{repository_iri(repository)}/thread/{number}"


def post_iri(repository: str, thread: int, index: int) -> str:
    """Post ``index`` of a thread (0 is the text that opened it)."""
    return f"{thread_iri(repository, thread)}/post/{index}"


def citation_iri(post: str, start: int) -> str:
    """The reference starting at character ``start`` of a post (``-1``: a review comment's
    reference by the line it sits on, not by its text)."""
    return f"{post}/cites/{start}"


def account_iri(service: str, login: str) -> str:
    """An account on a service, e.g. a GitHub login."""
    return f"{ID}account/{service}/{quote(login)}"


def mail_sender_iri(address: str) -> str:
    """Someone who sent mail but is not among the people resolved, by a hash of their address
    (so the address itself never becomes part of an IRI)."""
    return f"{ID}mail-sender/{hashlib.sha256(address.lower().encode()).hexdigest()[:20]}"


def mail_message_iri(list_name: str, token: str) -> str:
    """A list message, by the token of its mail-archive permalink (or ``msg<N>`` for links
    into the old archive)."""
    return f"{ID}mail/{quote(list_name)}/{quote(token)}"


def mail_thread_iri(list_name: str, root_token: str) -> str:
    """A mail thread, by its first message's token."""
    return f"{ID}mail/{quote(list_name)}/thread/{quote(root_token)}"


def source_record_iri(source: str, *names: str) -> str:
    """A record of a registered source that has no IRI function of its own here: under the
    source's name, by the public names that tell it apart (``minutes``, ``2029-04-12``,
    ``3``), so a rebuild mints the same IRI."""
    return f"{ID}{quote(source)}/" + "/".join(quote(name, safe="") for name in names)


def mail_link_iri(url: str) -> str | None:
    """The message node a link into the IETF mail archive names, new or old form."""
    new = re.match(r"https://mailarchive\.ietf\.org/arch/msg/([^/]+)/([^/]+)/?$", url)
    if new:
        return mail_message_iri(new.group(1), new.group(2))
    old = re.match(r"https://www\.ietf\.org/mail-archive/web/([^/]+)/current/(msg\d+)\.html$", url)
    return mail_message_iri(old.group(1), old.group(2)) if old else None
