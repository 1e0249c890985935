"""The package root is the public API: what it exports, and that it is enough.

Like httpx's own export test: ``__all__`` lists exactly the public names the root binds, in
order; and every class a public signature of :class:`Brain` or a field of :class:`Answer`
needs is one of them, so a caller never imports from a private module to type its code.
"""

from __future__ import annotations

import inspect
import types
import typing
from collections.abc import Iterator

import ratified_rdf
from ratified_rdf import Answer, Brain, RatifiedError, Reader


def _public_names() -> list[str]:
    # dir(), not vars(): the root binds most names on first use (PEP 562), and dir lists them.
    return [
        name
        for name in dir(ratified_rdf)
        if not name.startswith("_")
        and not isinstance(getattr(ratified_rdf, name), types.ModuleType)
    ]


def test_all_lists_exactly_the_public_names_in_order() -> None:
    assert ratified_rdf.__all__ == sorted(ratified_rdf.__all__)
    assert set(ratified_rdf.__all__) - {"__version__"} == set(_public_names())


def _classes_in(hint: object) -> Iterator[type]:
    """Every class named in a type hint, through unions, generics and Annotated."""
    if isinstance(hint, type):
        yield hint
    for arg in typing.get_args(hint):
        yield from _classes_in(arg)
    origin = typing.get_origin(hint)
    if isinstance(origin, type):
        yield origin


def _ours(cls: type) -> bool:
    return cls.__module__.startswith("ratified_rdf")


def test_every_class_a_public_signature_needs_is_exported() -> None:
    needed: dict[str, str] = {}
    for name, member in inspect.getmembers(Brain):
        if name.startswith("_") or not callable(member):
            continue
        for hint in typing.get_type_hints(member).values():
            for cls in _classes_in(hint):
                if _ours(cls):
                    needed.setdefault(cls.__name__, f"Brain.{name}")
    for field in Answer.model_fields.values():
        for cls in _classes_in(field.annotation):
            if _ours(cls):
                needed.setdefault(cls.__name__, "Answer")
    missing = {name: where for name, where in needed.items() if name not in ratified_rdf.__all__}
    assert not missing, f"used in public signatures but not exported: {missing}"
    # The check sees what it should: the reader, the answer and its result records.
    assert {"Reader", "Answer", "Intent", "HistoryEntry", "DiscussionPost"} <= set(needed)


def test_every_error_raised_on_purpose_derives_from_the_root() -> None:
    exported = [getattr(ratified_rdf, n) for n in ratified_rdf.__all__ if n.endswith("Error")]
    assert exported and all(issubclass(e, RatifiedError) for e in exported)
    assert issubclass(ratified_rdf.GateRejected, RatifiedError)
    assert issubclass(ratified_rdf.QueryRefused, ratified_rdf.InputError)
    # Old callers that caught the built-in classes still do.
    assert issubclass(ratified_rdf.ManifestError, ValueError)
    assert issubclass(ratified_rdf.StoreError, RuntimeError)


def test_a_misspelt_reader_fails_before_any_store_is_opened() -> None:
    try:
        Reader(clearance="secret")
    except RatifiedError as error:
        assert "secret" in str(error)
    else:
        raise AssertionError("a clearance no one defined was accepted")
    reader = Reader(tenant="acme", clearance="internal")
    assert reader.but(clearance="public").tenant == "acme"
    assert reader.but(clearance="public").clearance.value == "public"
    assert reader == Reader(tenant="acme", clearance="internal", actor=reader.actor)
