"""Revisions from ``<draft>-NN`` tags: the tag's commit holds the revision's text."""

from __future__ import annotations

from typing import ClassVar

from ratified_rdf.sources.revisions import (
    REVISION_NAME,
    FoundRevision,
    Rename,
    RepositoryScan,
    register,
)


class TagRevisions:
    """A ``<draft>-NN`` tag per revision (the file is the manifest's ``file``)."""

    name: ClassVar[str] = "tags"
    summary: ClassVar[str] = "a <draft>-NN tag per revision"

    def find(self, scan: RepositoryScan) -> list[FoundRevision]:
        """A revision per tag named ``<draft>-NN``."""
        found: list[FoundRevision] = []
        for tag_name, tag in sorted(scan.tags.items()):
            match = REVISION_NAME.match(tag_name)
            if match:
                found.append(
                    FoundRevision(
                        draft=match.group(1),
                        number=match.group(2),
                        commit=tag.commit,
                        committed_at=tag.committed_at,
                        source=self.name,
                        provenance=f"tag {tag_name}",
                        tag=tag_name,
                    )
                )
        return found

    def renames(self, scan: RepositoryScan) -> list[Rename]:
        """Tags show no rename."""
        return []


register(TagRevisions())
