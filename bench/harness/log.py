"""Progress lines on stderr (the report owns stdout), and the run's fatal error."""

import sys


class BenchError(Exception):
    """A run that cannot go on (a process that died, a port never bound): exits 1."""


def log(message: str) -> None:
    print(f"==> {message}", file=sys.stderr, flush=True)


def die(message: str) -> None:
    raise BenchError(message)
