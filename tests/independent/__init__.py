"""An attribution checker written apart from the pipeline (issue 19, item 8).

It reads a git repository with ``git`` alone and its own heading scanner, and says which
draft, revision and section every commit changed, so tests can compare the pipeline's
discussion counts with an answer reached another way. See :mod:`tests.independent.attribution`.
"""
