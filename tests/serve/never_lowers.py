"""A stand-in query worker for ``test_worker_priority``: it waits to be killed (it dies with
the test, as every worker dies with its server) and changes no priority of its own."""

import time

time.sleep(600)
