"""The guard on many threads at once (issue 50): a server reads readers' queries on many
threads, and rdflib's SPARQL parser breaks when two threads parse at once (a TypeError from a
parse action, which reached readers as a 500). Every distinct text here misses the guard's
cache, so each is really parsed."""

from __future__ import annotations

import threading

from ratified_rdf.queries.guard import QueryRefused, check_reader_query

THREADS = 8
EACH = 40


def _query(worker: int, n: int) -> str:
    return (
        f"PREFIX ex: <http://pigeon.example/{worker}/{n}> SELECT ?s (COUNT(?o) AS ?c) WHERE {{ "
        f"?s ex:p{n} ?o . FILTER(?o > {n}) OPTIONAL {{ ?s ?p '{worker}' }} }} GROUP BY ?s "
        f"LIMIT {n + 1}"
    )


def test_queries_checked_on_many_threads_at_once_are_each_read_alike() -> None:
    failures: list[str] = []
    forms: list[str] = []
    start = threading.Barrier(THREADS)

    def check(worker: int) -> None:
        start.wait()
        for n in range(EACH):
            try:
                forms.append(check_reader_query(_query(worker, n)).form)
            except Exception as error:  # anything at all is the failure under test
                failures.append(f"{type(error).__name__}: {error}")

    threads = [threading.Thread(target=check, args=(w,)) for w in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    assert forms == ["SELECT"] * (THREADS * EACH)


def test_refusals_on_many_threads_are_still_refusals() -> None:
    reasons: list[str] = []
    others: list[str] = []

    def check(worker: int) -> None:
        for n in range(EACH):
            try:
                check_reader_query(f"SELECT * WHERE {{ SERVICE <http://x/{worker}/{n}> {{}} }}")
            except QueryRefused as refused:
                reasons.append(refused.reason)
            except Exception as error:
                others.append(f"{type(error).__name__}: {error}")

    threads = [threading.Thread(target=check, args=(w,)) for w in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert others == []
    assert reasons == ["service"] * (THREADS * EACH)
