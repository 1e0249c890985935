"""Property-based and fuzz tests for hostile input: every reader, the router, the heading
search and the query parameters ("Proof under pressure", part 4).

The short form runs here in CI; ``benchmarks/fuzz.py`` runs the same properties with many more
examples and a mutation fuzzer over real-looking seed files.
"""
