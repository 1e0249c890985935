"""Two rules every format's reader keeps, on small fictional Pigeon texts in each format:

* back matter is never lettered as an appendix: in an RFC's text, Contributors and
  Acknowledgements after the appendices take no letter, whatever the source says;
* of many sections with one heading, a change is placed in the one it sits in, by position,
  never in the first with that heading.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from ratified_rdf.sources.formats import parse_document

MARKDOWN = (
    "---\ntitle: Pigeons\n---\n\n--- middle\n\n# Introduction\n\nHi.\n\n# Coos\n\n"
    "## Example\n\nOne coo.\n\n# Flaps\n\n## Example\n\nOne flap.\n\n## Example\n\n"
    "Two flaps.\n\n--- back\n\n# Wind\n\nStrong.\n\n# Contributors\n\nCarol.\n\n"
    "# Acknowledgements\n\nThanks.\n"
)

XML = """<?xml version="1.0"?>
<rfc number="9999" docName="draft-pigeon-flaps-03">
<front><title>Pigeons</title></front>
<middle>
<section title="Introduction"><t>Hi.</t></section>
<section title="Coos">
<section title="Example"><t>One coo.</t></section>
</section>
<section title="Flaps">
<section title="Example"><t>One flap.</t></section>
<section title="Example"><t>Two flaps.</t></section>
</section>
</middle>
<back>
<section title="Wind"><t>Strong.</t></section>
<section title="Contributors"><t>Carol.</t></section>
<section title="Acknowledgements"><t>Thanks.</t></section>
</back>
</rfc>
"""

TEXT = """Internet-Draft                   Pigeons                   October 2030


1.  Introduction

   Hi.

2.  Coos

2.1.  Example

   One coo.

3.  Flaps

3.1.  Example

   One flap.

3.2.  Example

   Two flaps.

Appendix A.  Wind

   Strong.

Contributors

   Carol.

Acknowledgements

   Thanks.
"""

TEXTS = {"rfc9999.md": MARKDOWN, "rfc9999.xml": XML, "rfc9999.txt": TEXT}


@pytest.mark.parametrize("name", sorted(TEXTS))
def test_an_rfcs_back_matter_takes_no_appendix_letter(name: str) -> None:
    document = parse_document(name, TEXTS[name], published=True)
    back = [(s.number, s.heading) for s in document.sections if s.appendix or not s.number]
    assert back == [("A", "Wind"), (None, "Contributors"), (None, "Acknowledgements")]


def _git(repo: Path, *args: str) -> None:
    env = {
        "GIT_AUTHOR_NAME": "Dana Example",
        "GIT_AUTHOR_EMAIL": "dana@example.org",
        "GIT_COMMITTER_NAME": "Dana Example",
        "GIT_COMMITTER_EMAIL": "dana@example.org",
        "GIT_AUTHOR_DATE": "2030-10-01T10:00:00+00:00",
        "GIT_COMMITTER_DATE": "2030-10-01T10:00:00+00:00",
        "PATH": "/usr/bin:/bin:/usr/local/bin",
        "HOME": str(repo),
    }
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env=env)


@pytest.mark.parametrize("name", sorted(TEXTS))
def test_a_change_to_one_of_many_same_headed_sections_is_placed_by_position(
    name: str, tmp_path: Path
) -> None:
    from ratified_rdf.sources.git_history import place_changes, read_history
    from ratified_rdf.sources.git_repo import GitRepository

    repo = tmp_path / "pigeons"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    file = name.replace("rfc9999", "draft-pigeon-flaps")
    (repo / file).write_text(TEXTS[name])
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "first")
    (repo / file).write_text(TEXTS[name].replace("Two flaps.", "Two flaps, then a glide."))
    _git(repo, "commit", "-q", "-am", "glide")
    opened = GitRepository.open(repo, cache_dir=tmp_path / "cache")
    commits = read_history(opened, ["main"], [file])
    places = place_changes(opened, commits)
    glide = next(c for c in commits if c.subject == "glide")
    assert [p.key for p in places[glide.commit]] == [(False, ("flaps", "example"), 1)]
    assert [p.heading for p in places[glide.commit]] == ["Example"]
