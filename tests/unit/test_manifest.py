"""The manifest reader: chains of replacements, and files that are not readable TOML."""

from __future__ import annotations

from pathlib import Path

import pytest

from ratified_rdf.records.manifest import ManifestError, load_manifest
from tests.work import lines_run

_HEAD = (
    '[brain]\nid = "chain"\ntitle = "t"\nrepository = "r"\n\n'
    '[[rfc]]\nnumber = 1\ntitle = "t"\npublished = "2020-01"\nref = "r"\nfile = "f"\n'
)


def _draft(name: str, *, replaced_by: str | None = None, became: str | None = None) -> str:
    entry = f'[[draft]]\nname = "{name}"\nfile = "f"\nrevisions = "00"\n'
    if replaced_by:
        entry += f'replaced_by = "{replaced_by}"\n'
    if became:
        entry += f'became = "{became}"\n'
    return entry


def _write(folder: Path, text: str | bytes) -> Path:
    file = folder / "manifest.toml"
    if isinstance(text, bytes):
        file.write_bytes(text)
    else:
        file.write_text(text, encoding="utf-8")
    return file


def test_a_chain_of_replacements_ends_in_its_rfc(tmp_path: Path) -> None:
    _write(
        tmp_path,
        _HEAD
        + _draft("draft-a-one", replaced_by="draft-a-two")
        + _draft("draft-a-two", replaced_by="draft-a-three")
        + _draft("draft-a-three", became="rfc1")
        + _draft("draft-a-alone"),
    )
    manifest, _ = load_manifest(tmp_path)
    assert [manifest.final_rfc(d.name) for d in manifest.draft] == ["rfc1", "rfc1", "rfc1", None]
    assert [manifest.replacements(d.name) for d in manifest.draft] == [2, 1, 0, 0]
    assert manifest.draft_entry("draft-a-two").replaced_by == "draft-a-three"


def test_a_long_chain_of_replacements_is_checked_in_linear_work(tmp_path: Path) -> None:
    # Walking each draft's chain on its own was cubic in the chain's length. Counted in lines
    # run, twice the chain is now about twice the work (a quadratic walk would be 4 times).
    def work(count: int) -> int:
        drafts = [
            _draft(f"draft-a-n{i}", replaced_by=f"draft-a-n{i + 1}")
            if i < count - 1
            else _draft(f"draft-a-n{i}", became="rfc1")
            for i in range(count)
        ]
        folder = tmp_path / f"chain-of-{count}"
        folder.mkdir()
        _write(folder, _HEAD + "".join(drafts))
        (manifest, _), lines = lines_run(lambda: load_manifest(folder))
        assert manifest.final_rfc("draft-a-n0") == "rfc1"
        assert manifest.replacements("draft-a-n0") == count - 1
        return lines

    assert work(1000) < 2.5 * work(500)


def test_a_cycle_of_replacements_names_where_it_was_entered(tmp_path: Path) -> None:
    _write(
        tmp_path,
        _HEAD
        + _draft("draft-a-one", replaced_by="draft-a-two")
        + _draft("draft-a-two", replaced_by="draft-a-three")
        + _draft("draft-a-three", replaced_by="draft-a-two"),
    )
    with pytest.raises(ManifestError, match="in a cycle through draft-a-two"):
        load_manifest(tmp_path)


@pytest.mark.parametrize(
    ("data", "complaint"),
    [
        ("[brain]\ntitle = 'Grüße'\n".encode("latin-1"), r"is not UTF-8 text \(byte 0xfc"),
        (b"a = " + b"[" * 5000 + b"1", "nests arrays or inline tables too deeply"),
        (b"a = " + b"{b = " * 5000 + b"1", "nests arrays or inline tables too deeply"),
    ],
)
def test_an_unreadable_manifest_is_a_manifest_error_naming_the_file(
    tmp_path: Path, data: bytes, complaint: str
) -> None:
    file = _write(tmp_path, data)
    with pytest.raises(ManifestError, match=complaint) as caught:
        load_manifest(tmp_path)
    assert str(file) in str(caught.value)


@pytest.mark.parametrize(
    ("field", "title", "complaint"),
    [
        (
            "brain.title",
            r"Pigeon \u001b[31mred\u001b[0m",
            r"control character \(U\+001B at position 7\)",
        ),
        ("brain.title", r"Pigeon\u0007", r"control character \(U\+0007 at position 6\)"),
        ("brain.title", r"Pigeon\tProtocol", r"control character \(U\+0009"),
        ("brain.title", r"\u202eNOEGIP", r"bidirectional control \(U\+202E"),
        ("brain.title", "P" * 1_000_000, "is 1,000,000 characters long; keep it to 2,000 or fewer"),
        ("rfc.0.title", r"The Pigeon\u0000Protocol", r"control character \(U\+0000"),
    ],
)
def test_a_title_that_is_not_one_line_of_plain_text_is_refused_naming_field_and_file(
    tmp_path: Path, field: str, title: str, complaint: str
) -> None:
    # TOML spells a control character as an escape; the title would reach every card.
    head = _HEAD.replace('title = "t"', f'title = "{title}"', 1 if field == "brain.title" else 2)
    if field != "brain.title":
        head = head.replace(f'title = "{title}"', 'title = "t"', 1)
    file = _write(tmp_path, head + _draft("draft-a-one", became="rfc1"))
    with pytest.raises(ManifestError, match=complaint) as caught:
        load_manifest(tmp_path)
    message = str(caught.value)
    assert message.startswith(f"{file} does not describe a brain correctly: {field}: ")
    assert "\x1b" not in message and "\x07" not in message and len(message) < 500
    # Plain text up to the limit is a title.
    plain = "Pigeon " + "é" * (2_000 - 7)
    _write(tmp_path, _HEAD.replace('title = "t"', f'title = "{plain}"') + _draft("draft-a-b"))
    manifest, _ = load_manifest(tmp_path)
    assert manifest.brain.title == manifest.rfc[0].title == plain
