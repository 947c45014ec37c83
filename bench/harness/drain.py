"""The drain: `webhookd worker` (or all) started on pre-loaded deliveries and timed until
every one succeeded, with the checks that make its figures INVALID."""

import os
import time
from dataclasses import dataclass

from .cpu import process_ticks
from .figures import figures_of
from .log import die, log
from .processes import hwm_mib, tail
from .stats import num


@dataclass
class Drained:
    rate: str  # deliveries a second, as an integer string
    hwm: str  # the process's peak RSS in MiB
    valid: bool  # False after a failed check (the time cap, attempts, the sink's count)
    ticks: int = 0  # the process's CPU time (clock ticks)


def preload(bench, db, n: int, slow: int = 0, cap: int = 64) -> None:
    """N due deliveries over three destinations at the sink's /ok/1..3 (max_in_flight CAP)
    and, when SLOW > 0, SLOW more (due first) to a fourth at /hang (cap 16)."""
    db.sql("preload", n=n, slow=slow, cap=cap, sink=f"127.0.0.1:{bench.sink.port}",
           secret=bench.secret)


@dataclass
class Run:
    seconds: float
    capped: bool  # stopped at the time cap, not finished
    hwm: str  # the process's peak RSS in MiB
    ticks: int  # the process's CPU time (clock ticks), all its threads


def timed_run(bench, name, argv, env, cap_s, finished, hook=None) -> Run:
    """Starts ARGV and times it until FINISHED() (asked every 200 ms) or CAP_S seconds;
    HOOK(name) checks the running process before it stops. Dies if it exits meanwhile."""
    t0 = time.monotonic()
    proc = bench.procs.start(name, argv, env=env)
    capped = False
    while True:
        time.sleep(0.2)
        if proc.poll() is not None:
            program = " ".join([os.path.basename(argv[0])] + list(argv[1:]))
            die(f"{program} exited; see its log: {tail(bench.procs.log_of(name), 5)}")
        if finished():
            break
        if time.monotonic() - t0 > cap_s:
            capped = True
            break
    seconds = time.monotonic() - t0
    hwm = hwm_mib(proc.pid)
    ticks = process_ticks(proc.pid)
    if hook:
        hook(name)
    bench.procs.stop(proc)
    return Run(seconds, capped, hwm, ticks)


def drain(bench, name, mode, n, db, extra=0, env=None, sink=None, extra_attempts=0, hook=None):
    """Starts `webhookd MODE` on DB and times it until the N deliveries to the /ok/
    destinations succeeded (the sink's counter, then the database, polled every 200 ms);
    at most EXTRA more requests may reach the sink's other paths meanwhile, and at most
    EXTRA_ATTEMPTS more attempts than deliveries be recorded (receivers that fail some
    requests make retries). HOOK(name) checks the running process before it stops."""
    sink = sink or bench.sink
    # At least 1,000/s is expected; past 10 minutes the rate so far is the figure.
    cap_s = min(n // 1000 + 60, 600)
    sink.reset()
    before = sink.stats_line()
    base = sink.ok()
    run = timed_run(bench, name, [bench.webhookd, mode], bench.wh_env(db, **(env or {})), cap_s,
                    lambda: sink.ok() - base >= n and db.sql("ok_unfinished") == "0", hook)
    seconds, capped, hwm = run.seconds, run.capped, run.hwm
    got = sink.ok() - base
    if capped:
        bench.invalidate(f"{name}: stopped at the {cap_s} s time cap with {got} of {n}"
                         " delivered", *figures_of(name))
    delivered = got if capped else n  # the counter may include requests to the other paths
    done = Drained(f"{delivered / seconds:.0f}", hwm, not capped, run.ticks)
    attempts = int(num(db.sql("ok_attempts")))
    if not capped and not n <= attempts <= n + extra_attempts:
        done.valid = False
        outcomes = ";".join(db.sql("attempt_outcomes").splitlines())
        bench.invalidate(f"{name}: {attempts} attempts recorded for {n} deliveries"
                         f" (outcome|error|count): {outcomes};", *figures_of(name))
    received = sink.ok() - base
    if not capped and not n <= received <= n + extra:
        done.valid = False
        bench.invalidate(f"{name}: the sink received {received} requests for {n} deliveries"
                         f" ({extra} more allowed)", *figures_of(name))
    if not capped and not sink.verified(name, n, extra, before):
        done.valid = False
    log(f"{name}: {n} deliveries in {int(seconds * 1000)} ms: {done.rate}/s, attempts"
        f" {attempts}, peak RSS {hwm} MiB")
    return done


def preloaded_drain(bench, name, dbname, n=None, mode="worker", **kwargs) -> Drained:
    """A fresh database with N (default: the run's N) due deliveries, drained, dropped."""
    n = n or bench.cfg.deliveries
    db = bench.new_db(dbname)
    preload(bench, db, n)
    done = drain(bench, name, mode, n, db, **kwargs)
    db.drop()
    return done
