"""The access file as a server reads it: read again when it changes or on SIGHUP, tokens that
expire, and a broken edit that leaves the last good list in force and says why."""

from __future__ import annotations

import logging
import os
import signal
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from ratified_rdf.records.manifest import ManifestError
from ratified_rdf.surfaces import access as access_module
from ratified_rdf.surfaces.access import AccessFile, load_access, reload_on_sighup, token_digest

NOON = datetime(2030, 5, 1, 12, 0, tzinfo=UTC)


def _reader(name: str, token: str, extra: str = "") -> str:
    return f'[[reader]]\nname = "{name}"\ntoken_sha256 = "{token_digest(token)}"\n{extra}\n'


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = NOON

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture()
def path(tmp_path: Path) -> Path:
    file = tmp_path / "access.toml"
    file.write_text(_reader("Rita", "rita-secret") + _reader("Pat", "pat-secret"))
    return file


def test_a_token_removed_from_the_file_is_refused_at_the_next_call(path: Path) -> None:
    access = AccessFile(path)
    grant = access.grant_for("rita-secret")
    assert grant is not None and grant.name == "Rita"
    path.write_text(_reader("Pat", "pat-secret"))
    assert access.grant_for("rita-secret") is None
    assert access.grant_for("pat-secret") is not None
    # A file replaced by another (an editor's rename) is read too.
    replacement = path.with_name("new.toml")
    replacement.write_text(_reader("Rita", "rita-secret"))
    replacement.replace(path)
    assert access.grant_for("rita-secret") is not None
    assert access.grant_for("pat-secret") is None


def test_a_token_is_refused_from_the_moment_it_expires(path: Path) -> None:
    path.write_text(_reader("Rita", "rita-secret", "expires = 2030-05-01T13:00:00+01:00"))
    clock = Clock()
    access = AccessFile(path, now=clock)
    [grant] = access.current().reader
    assert grant.expires == NOON  # an offset date-time is the moment it names
    clock.now = NOON - timedelta(microseconds=1)
    assert access.grant_for("rita-secret") == grant
    clock.now = NOON
    assert access.grant_for("rita-secret") is None
    # The list alone judges expiry by the moment it is given.
    assert access.current().grant_for("rita-secret", NOON - timedelta(seconds=1)) == grant
    assert access.current().grant_for("rita-secret", NOON) is None


@pytest.mark.parametrize("expires", ["2030-05-01T12:00:00", "2030-05-01"])
def test_an_expiry_without_a_zone_is_refused_with_a_sentence(tmp_path: Path, expires: str) -> None:
    file = tmp_path / "access.toml"
    file.write_text(_reader("Rita", "rita-secret", f"expires = {expires}"))
    with pytest.raises(ManifestError, match=r"reader\.0\.expires: .*time zone, such as"):
        load_access(file)
    file.write_text(_reader("Rita", "rita-secret", 'expires = "2030-05-01T12:00:00Z"'))
    assert load_access(file).reader[0].expires == NOON  # a quoted one is read too


def test_a_broken_edit_keeps_the_last_good_list_and_says_why(
    path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    access = AccessFile(path)
    with caplog.at_level(logging.WARNING, logger="ratified_rdf.access"):
        path.write_text('[[reader]]\nname = "Rita\n')
        assert access.grant_for("rita-secret") is not None
        assert access.problem is not None and "not valid TOML" in access.problem
        [logged] = caplog.records
        message = logged.getMessage()
        assert str(path) in message and "not valid TOML" in message
        assert "stay in force until it is fixed" in message
        # Said once per change, not once per request.
        access.grant_for("rita-secret")
        assert len(caplog.records) == 1
        path.unlink()
        assert access.grant_for("rita-secret") is not None
        assert "cannot be read" in (access.problem or "")
        path.write_text(_reader("Pat", "pat-secret"))
        assert access.grant_for("rita-secret") is None
        assert access.grant_for("pat-secret") is not None
        assert not access.problem  # in force again
        assert "reads again" in caplog.records[-1].getMessage()


def test_a_bad_file_at_start_is_an_error(tmp_path: Path) -> None:
    file = tmp_path / "access.toml"
    file.write_text("[[reader]\n")
    with pytest.raises(ManifestError, match="not valid TOML"):
        AccessFile(file)


def test_sighup_reads_the_file_again(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A change the file's identity does not show (the same inode, size and times) is read
    # only when asked to.
    monkeypatch.setattr(access_module, "_identity", lambda _path: (1, 2, 3, 4, 5))
    access = AccessFile(path)
    path.write_text(_reader("Pat", "pat-secret"))
    assert access.grant_for("rita-secret") is not None
    before = signal.getsignal(signal.SIGHUP)
    with reload_on_sighup(access):
        os.kill(os.getpid(), signal.SIGHUP)
        assert access.grant_for("rita-secret") is None
    assert signal.getsignal(signal.SIGHUP) == before
