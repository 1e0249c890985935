"""The graph: records turned into RDF batches (`mapping` and its kin), the SHACL `gate` every write
passes, the `store` (embedded Oxigraph, or a SPARQL server), runs and their catalog (`writer`),
and what a reader sees of them (`scope`, `copies`, `publish`).
"""
