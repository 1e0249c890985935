"""Print what the independent checker finds in a repository, to set beside the pipeline's.

Usage: ``python -m tests.independent.report BUNDLE`` (a git bundle, a clone or a git dir).

Per draft: distinct commits, revisions, commits after the draft's last tag, authors. When the
repository holds draft-ietf-tls-tls13-28 (the last revision before RFC 8446), also the commits
of the body sections 4.1, 4.4 and 5.1 against the appendix sections B.1, B.3.1 and B.3.3 with
the same headings, counted three ways: landed in -28; over the whole chain, carried to -28's
sections; and the same including subsections.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from tests.independent.attribution import Attribution, attribute

TLS_LAST = "draft-ietf-tls-tls13-28"
TLS_SECTIONS = ("4.1", "4.4", "5.1", "B.1", "B.3.1", "B.3.3")


def report(result: Attribution) -> str:
    """The report's text for one attribution."""
    lines = [f"default branch: {result.branch}; commits attributed: {len(result.commits)}", ""]
    lines.append(f"{'draft':40} {'commits':>8} {'revisions':>9} {'after last':>10} {'authors':>7}")
    for draft, count in sorted(result.commits_per_draft().items(), key=lambda i: str(i[0])):
        after = {
            sha
            for sha, record in result.commits.items()
            for touch in record.touches
            if touch.draft == draft and touch.revision is None
        }
        authors = len(result.commits_per_author(draft)) if draft else 0
        revisions = len(result.revisions.get(draft, ())) if draft else 0
        lines.append(
            f"{draft or '(no draft)':40} {count:>8} {revisions:>9} {len(after):>10} {authors:>7}"
        )
    if result.empty_revisions:
        lines.append(
            "revisions nothing landed in (tag older than an earlier one's): "
            + ", ".join(sorted(result.empty_revisions))
        )
    if TLS_LAST in result.revision_trees:
        tree = result.revision_trees[TLS_LAST]
        landed = result.commits_per_section(TLS_LAST)
        carried = result.carried_section_commits(TLS_LAST)
        nested = result.carried_section_commits(TLS_LAST, include_subsections=True)
        lines += ["", f"{TLS_LAST} ({result.revision_files[TLS_LAST]}): commits per section"]
        lines.append(
            f"{'section':8} {'heading':50} {'landed':>6} {'carried':>7} {'with subsections':>16}"
        )
        for number in TLS_SECTIONS:
            section = tree.numbered(number)
            title = " > ".join(section.path) if section else "(no such section)"
            lines.append(
                f"{number:8} {title[-50:]:50} {len(landed.get(number, ())):>6} "
                f"{len(carried.get(number, ())):>7} {len(nested.get(number, ())):>16}"
            )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Attribute the repository named on the command line and print the report."""
    parser = argparse.ArgumentParser(prog="python -m tests.independent.report")
    parser.add_argument("repository", help="a git bundle, a clone or a git directory")
    parser.add_argument("--branch", help="the branch to walk (default: the one HEAD names)")
    arguments = parser.parse_args(argv)
    print(report(attribute(arguments.repository, branch=arguments.branch)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
