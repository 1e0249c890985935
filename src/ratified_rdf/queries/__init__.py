"""Hand-written SPARQL: loading ``sparql/*.rq``, binding parameters, running with a record."""

from ratified_rdf.queries.files import QueryError, QueryFile, all_queries, load_query
from ratified_rdf.queries.run import QueryRun, run_query

__all__ = ["QueryError", "QueryFile", "QueryRun", "all_queries", "load_query", "run_query"]
