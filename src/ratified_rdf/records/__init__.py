"""Records: the manifest a brain is built from and the frozen records of truth read from the
sources (spec sections, alignments, citations, discussions, people, expertise), before any RDF
is written.
"""
