"""Imported by multiprocessing's fork server only, as the first module it preloads
(:func:`ratified_rdf._forked.ensure_fork_server`): binds the server to die with the process
that started it. Without it, a build killed with SIGKILL left the server running, and the gate
workers it had forked with it: each held the server's "alive" pipe open, the server waited
for that pipe to close, and the workers waited for the server."""

from ratified_rdf._forked import bind_fork_server

bind_fork_server()
