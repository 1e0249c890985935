"""Shared fixtures: where the real TLS corpus is, one brain built from it per test session,
and the Oxigraph server the remote-store tests run against; and each test's tier.

Every test gets its tier marker from the folder it is in (:data:`TIERS`); a test that uses a
corpus fixture is a ``corpus`` test wherever it is. docs/testing.md says which to run when.

A test that needs the corpus (or the server) skips when it is missing on a developer's
machine, but fails loudly under ``CI=true``: there a missing one means a check silently stopped
running.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from hypothesis import settings

from ratified_rdf import Brain, BuildReport
from ratified_rdf.sources.git_repo import GitRepository

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "corpus" / "tls13-spec"
BUNDLE = CORPUS / "tls13-spec.bundle"
QUIC_CORPUS = REPO.parent / "shared" / "corpus" / "quic-base-drafts"
QUIC_BUNDLE = QUIC_CORPUS / "base-drafts.bundle"
QUIC_MANIFEST = REPO / "records" / "quic"
DTLS_BUNDLE = REPO.parent / "shared" / "corpus" / "tlswg" / "dtls13-spec" / "dtls13-spec.bundle"
DTLS_MANIFEST = REPO / "records" / "tlswg" / "dtls13-spec"
MANIFEST = REPO / "records" / "tls13"

# No test asserts how long it took, Hypothesis' default of 200 ms an example included: under
# load that fails good code. Bounded work is counted (tests/work.py) or left to the fuzz
# harness's bound, which interrupts a hang (tests/fuzz/harness.py).
settings.register_profile("ratified", deadline=None)
settings.load_profile("ratified")

TIERS: dict[str, tuple[str, ...]] = {
    "unit": ("unit",),
    # The scorer's and the independent checker's own tests run on small fixtures; their tests
    # on the real corpora are marked corpus, which takes them out of the unit tier.
    "eval": ("unit",),
    "independent": ("unit",),
    "corpus": ("corpus",),
    "serve": ("serve",),
    "mcp": ("serve",),
    "fuzz": ("fuzz",),
    # Builds run as processes of their own and killed at random moments.
    "crash": ("serve", "slow"),
}
"""The tier markers of each folder under tests/ (the markers are described in pyproject.toml)."""

CORPUS_FIXTURES = frozenset(
    {
        "tls_bundle",
        "tls_build",
        "tls_brain",
        "tls_mirror",
        "tls_checker",
        "quic_bundle",
        "quic_build",
        "quic_checker",
        "dtls_bundle",
        "dtls_build",
    }
)
"""Fixtures that need ../shared: a test using one, directly or through another fixture, is a
``corpus`` test (and not a ``unit`` one) without saying so."""


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark every test with the tiers of its folder, so that a new test file has its tier
    without anyone remembering; ``unit`` gives way to an explicit ``corpus`` or ``serve``."""
    tests = Path(__file__).resolve().parent
    for item in items:
        if not item.path.resolve().is_relative_to(tests):
            continue  # not one of these tests (pytest was also given a path elsewhere)
        parts = item.path.resolve().relative_to(tests).parts
        tiers = TIERS.get(parts[0]) if len(parts) > 1 else None
        if tiers is None:
            raise pytest.UsageError(
                f"{item.nodeid} is in no tier: put it in a folder of tests/ that TIERS in "
                "tests/conftest.py names, or name its folder there."
            )
        marked = {marker.name for marker in item.iter_markers()}
        if CORPUS_FIXTURES & set(item.fixturenames) and "corpus" not in marked:
            item.add_marker(pytest.mark.corpus)
            marked.add("corpus")
        for tier in tiers:
            if tier == "unit" and marked & {"corpus", "serve"}:
                continue
            if tier not in marked:
                item.add_marker(tier)


def pytest_configure(config: pytest.Config) -> None:
    """Sign audit logs with a key outside every log's folder, as an operator sets
    ``RATIFIED_AUDIT_KEY``; servers the tests start inherit it. A test of the keyless case
    removes it with monkeypatch."""
    if "RATIFIED_AUDIT_KEY" not in os.environ:
        folder = Path(tempfile.mkdtemp(prefix="ratified-test-key-"))
        os.environ["RATIFIED_AUDIT_KEY"] = str(folder / "audit-signing-key.pem")


def _missing(message: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(message, pytrace=False)
    pytest.skip(message)


def _answers(url: str) -> bool:
    try:
        return httpx.get(f"{url}/query", params={"query": "ASK {}"}, timeout=60).is_success
    except httpx.HTTPError:
        return False


@pytest.fixture(scope="session")
def oxigraph_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """An Oxigraph server on loopback: the one ``.ci/run`` started
    (``$RATIFIED_TEST_OXIGRAPH``), else one started here from the ``oxigraph`` command."""
    given = os.environ.get("RATIFIED_TEST_OXIGRAPH")
    if given:
        # .ci/run waits a while for the server it starts; on a busy machine it may still be
        # coming up: a hang guard of minutes, as for one started here.
        deadline = time.monotonic() + 300
        while not _answers(given):
            if time.monotonic() > deadline:
                _missing(
                    f"The Oxigraph server at {given} ($RATIFIED_TEST_OXIGRAPH) does not answer."
                )
            time.sleep(0.5)
        yield given
        return
    binary = shutil.which("oxigraph")
    if binary is None:
        _missing("The oxigraph server command is missing: pip install oxigraph.")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    folder = tmp_path_factory.mktemp("oxigraph-server")
    server = subprocess.Popen(
        [str(binary), "serve", "--location", str(folder), "--bind", f"127.0.0.1:{port}"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 300  # a hang guard: it answers within a second
        while not _answers(url):
            if time.monotonic() > deadline or server.poll() is not None:
                _missing(f"The Oxigraph server started at {url} did not come up.")
            time.sleep(0.1)
        yield url
    finally:
        server.terminate()
        try:
            server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            server.kill()  # never left running past the session
            server.wait()


BACKENDS = ("embedded", "copied-in-memory", "oxigraph-server")
"""The stores a brain can be built in (see :func:`backend`)."""


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    """Which store a brain is built in: the embedded Oxigraph (in memory, or on disk and
    answered from an in-memory copy), or an Oxigraph server."""
    return request.param


def corpus_history(corpus: str, tls_bundle: Path, cache: Path) -> tuple[GitRepository, list[str]]:
    """The repository of ``corpus`` (``tls`` or ``quic``, required as :func:`require_corpus`
    does), opened with ``cache``, and the refs its history is read from: every draft tag and
    ``main``."""
    bundle = tls_bundle if corpus == "tls" else require_corpus(QUIC_BUNDLE, "QUIC")
    repo = GitRepository.open(bundle, cache_dir=cache)
    return repo, [tag for tag in repo.tags() if tag.startswith("draft-")] + ["main"]


def require_corpus(bundle: Path = BUNDLE, name: str = "TLS") -> Path:
    """A corpus bundle (the TLS one by default), or a skip (a failure under CI=true) saying
    it is missing."""
    if not bundle.is_file():
        message = f"The {name} corpus is missing: {bundle} does not exist."
        if os.environ.get("CI") == "true":
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    return bundle


@pytest.fixture(scope="session")
def tls_bundle() -> Path:
    """Path of the real tls13-spec git bundle."""
    return require_corpus()


@pytest.fixture(scope="session")
def tls_build(
    tls_bundle: Path, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, BuildReport]:
    """The TLS brain built once per session from the bundle into an on-disk store, every
    batch gated by the compiled engine and by pyshacl, the build failing where they differ."""
    store = tmp_path_factory.mktemp("tls-brain") / "store"
    with cross_checked():
        brain, report = Brain.build(MANIFEST, path=store, source=str(tls_bundle))
    brain.close()
    return store, report


@contextmanager
def cross_checked() -> Iterator[None]:
    """Gate builds in the block with both SHACL engines, a disagreement rejecting the batch
    (``RATIFIED_GATE_ENGINE=cross-check``): every real batch is a comparison."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("RATIFIED_GATE_ENGINE", "cross-check")
        yield


@pytest.fixture(scope="session")
def tls_brain(tls_build: tuple[Path, BuildReport]) -> Brain:
    """The TLS brain, open for reading."""
    return Brain.open(tls_build[0])


@pytest.fixture(scope="session")
def quic_bundle() -> Path:
    """Path of the real quicwg/base-drafts git bundle (a failure under CI=true if missing)."""
    return require_corpus(QUIC_BUNDLE, "QUIC")


# The RFC texts of the QUIC repository, for the independent checker: (ref, file).
QUIC_RFC_TEXTS = [("main", f"rfc{n}.md") for n in (8999, 9000, 9001, 9002, 9114, 9204)]


@pytest.fixture(scope="session")
def quic_checker(quic_bundle: Path) -> object:
    """The independent checker's attribution of the QUIC repository (tests/independent),
    computed once per session: it reads git alone."""
    from tests.independent.attribution import attribute

    return attribute(quic_bundle, texts=QUIC_RFC_TEXTS)


@pytest.fixture(scope="session")
def quic_build(
    quic_bundle: Path, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, BuildReport]:
    """The QUIC brain (six drafts in one repository) built once per session, on disk, gated
    as :func:`tls_build`'s."""
    store = tmp_path_factory.mktemp("quic-brain") / "store"
    with cross_checked():
        brain, report = Brain.build(QUIC_MANIFEST, path=store, source=str(quic_bundle))
    brain.close()
    return store, report


@pytest.fixture(scope="session")
def dtls_bundle() -> Path:
    """Path of the real tlswg/dtls13-spec git bundle, the corpus of the held-out DTLS 1.3
    paraphrase block (a failure under CI=true if missing)."""
    return require_corpus(DTLS_BUNDLE, "DTLS 1.3")


@pytest.fixture(scope="session")
def dtls_build(
    dtls_bundle: Path, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, BuildReport]:
    """The DTLS 1.3 brain (RFC 9147, a corpus the router was not tuned on) built once per
    session, on disk, gated as :func:`tls_build`'s."""
    store = tmp_path_factory.mktemp("dtls-brain") / "store"
    with cross_checked():
        brain, report = Brain.build(DTLS_MANIFEST, path=store, source=str(dtls_bundle))
    brain.close()
    return store, report


TLSWG = REPO.parent / "shared" / "corpus" / "tlswg"
"""The TLS working group's other repositories, a bundle each (``<name>/<name>.bundle``)."""


class TlswgStores:
    """Each TLS working group repository's brain, built on disk from its manifest under
    ``records/tlswg/<name>`` the first time a test asks for it, then shared by every corpus
    test of the session: the brains cost more than anything the tests do with them."""

    def __init__(self, folder: Path, request: pytest.FixtureRequest) -> None:
        self._folder = folder
        self._request = request
        self._built: dict[str, tuple[Path, BuildReport]] = {}

    def __call__(self, name: str) -> tuple[Path, BuildReport]:
        """The store of repository ``name`` and the report of its build."""
        if name not in self._built:
            if name == "dtls13-spec":  # built (and cross-checked) for the held-out block
                self._built[name] = self._request.getfixturevalue("dtls_build")
                return self._built[name]
            bundle = require_corpus(TLSWG / name / f"{name}.bundle", f"tlswg/{name}")
            store = self._folder / name / "store"
            brain, report = Brain.build(
                REPO / "records" / "tlswg" / name, path=store, source=str(bundle)
            )
            brain.close()
            self._built[name] = (store, report)
        return self._built[name]


@pytest.fixture(scope="session")
def tlswg_store(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> TlswgStores:
    """The tlswg repositories' brains, each built once per session when first asked for."""
    return TlswgStores(tmp_path_factory.mktemp("tlswg"), request)


@pytest.fixture(scope="session")
def tls_mirror(tls_bundle: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A bare mirror of the TLS bundle, for the independent checker and for git itself."""
    import subprocess

    mirror = tmp_path_factory.mktemp("tls-mirror") / "repository.git"
    subprocess.run(
        ["git", "clone", "--quiet", "--mirror", str(tls_bundle), str(mirror)],
        check=True,
        capture_output=True,
    )
    return mirror


# The RFC texts of the TLS repository, for the independent checker: (ref, file).
TLS_RFC_TEXTS = [("as-published", "draft-rescorla-tls-rfc8446-bis.md"), ("main", "rfc9846.md")]


@pytest.fixture(scope="session")
def tls_checker(tls_mirror: Path) -> object:
    """The independent checker's attribution of the TLS repository (tests/independent),
    computed once per session: it reads git alone."""
    from tests.independent.attribution import attribute

    return attribute(tls_mirror, texts=TLS_RFC_TEXTS)
