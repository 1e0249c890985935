"""The tests' own time budgets (docs/testing.md, "What a test may not assert"): every server a
test makes with ``create_app`` names its query budget, and a query that must succeed gets
``GENEROUS_S`` (tests/serve/deadlines.py), not the endpoint's default of 10 s or a few seconds
of the test's choosing. On a busy machine (CI runs the corpus tier beside the others on two
cores) such a budget turned queries that must succeed into 503s. A short budget is for a query
that must be ended, given with ``tight_budget``; the few servers that are made with one
otherwise are listed here with the reason."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]

SHORT_BUDGETS: dict[tuple[str, str], str] = {
    ("serve/test_api_and_resources.py", "test_create_app_checks_its_limits"): (
        "create_app refusing limits that are no limits: nothing is served"
    ),
    ("serve/test_command.py", "test_the_server_answers_while_the_copy_is_made"): (
        "the budget of a request waiting for a copy, which the request must not wait for: "
        "the question is answered from the store on disk, outside the query workers"
    ),
    ("serve/test_fair_share.py", "test_many_connections_from_one_address_hold_one_stream_slot"): (
        "how long the abandoned second connection waits for a stream slot; the client that "
        "must succeed takes the slot kept for it at once"
    ),
    (
        "serve/test_http_conventions.py",
        "test_a_lower_timeout_is_honoured_and_a_higher_one_capped",
    ): ("the 2 s server runs only a query that must be ended"),
}
"""The ``create_app`` calls in tests that give no :data:`GENEROUS_S`, by file and test, and
why that holds on a busy machine."""


def _apps_without_a_roomy_budget() -> set[tuple[str, str]]:
    """(file, enclosing function) of each ``create_app`` call in tests/ whose
    ``query_timeout_s`` is not ``GENEROUS_S`` (or that gives none)."""
    found: set[tuple[str, str]] = set()
    for path in sorted(TESTS.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for function in ast.walk(tree):
            if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for node in ast.walk(function):
                if not isinstance(node, ast.Call):
                    continue
                name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
                if name != "create_app":
                    continue
                budget = {k.arg: ast.unparse(k.value) for k in node.keywords}
                if budget.get("query_timeout_s") != "GENEROUS_S":
                    found.add((path.relative_to(TESTS).as_posix(), function.name))
    return found


def test_every_server_a_test_makes_gives_its_queries_a_roomy_budget() -> None:
    unlisted = sorted(_apps_without_a_roomy_budget() - set(SHORT_BUDGETS))
    assert not unlisted, (
        "These tests make a server with create_app whose queries meet the default budget of "
        "10 s or one of their own: on a busy machine a query that must succeed gets 503. Give "
        "it query_timeout_s=GENEROUS_S (tests/serve/deadlines.py) and end the query that must "
        "be ended with tight_budget; or, where the short budget cannot turn a success into a "
        f"503, list the test in SHORT_BUDGETS with the reason: {unlisted}"
    )


def test_every_short_budget_listed_is_still_given() -> None:
    # A listed test that was changed or removed leaves no stale reason behind.
    assert sorted(set(SHORT_BUDGETS) - _apps_without_a_roomy_budget()) == []
