#!/usr/bin/env python3
"""scripts/bench: measures webhookd against its bounds on this machine (docs/benchmarks.md).
Builds Release into build-bench/, then runs the scenarios (bench/scenarios/) on the shared
harness (bench/harness/) and prints the report."""

import os
import signal
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness.bench import Bench  # noqa: E402
from harness.config import Config  # noqa: E402
from harness.env import environment, load_avg  # noqa: E402
from harness.log import BenchError, log  # noqa: E402
from scenarios import (backlog, brokers, catalog, costs, delivery, e2e, fairness,  # noqa: E402
                       feeds, fifo, full, ha, ingest, peer, platform, privacy, protection, proxy,
                       receivers, retention, soak, sustained, tracing)

# What --only takes, and the scenario that measures it alone.
ONLY = {"catalog": catalog, "proxy": proxy, "ha": ha, "tracing": tracing,
        "receivers": receivers, "fairness": fairness, "sustained": sustained,
        "delivery": delivery, "peer": peer, "costs": costs, "privacy": privacy,
        "retention": retention, "brokers": brokers, "fifo": fifo, "feeds": feeds, "e2e": e2e}
ONLY_KEYS = ", ".join(ONLY)

USAGE = """\
Usage: scripts/bench [--quick] [--only SECTION] [--profile DIR] [--help]
       (SECTION: catalog, proxy, ha, tracing, receivers, fairness, sustained, delivery,
        peer, costs, privacy, retention, brokers, fifo, feeds; --profile DIR goes with
        --only costs)
       scripts/bench --soak [MINUTES]

Builds Release into build-bench/ and measures webhookd on loopback against a throw-away
PostgreSQL cluster (a temporary directory, default durability: fsync and
synchronous_commit on), then prints the environment, a table, and one `name: value`
line per figure:
"""

SIZES = """
                 full        --quick
  load seconds   10          5
  sustained step 30 s        15 s
  N deliveries   200,000     50,000
  backlog        1,000,000   200,000
  platform       10,000,000  2,000,000 deliveries
  history        2,000,000   100,000 events
  dropped day    1,000,000   100,000 events (two days)
  feeds waiting  10,000,000  1,000,000 messages
"""

TRAILER = """\
The delivery drain and the peer's drain at its better concurrency run three times each,
each delivery drain followed by a slow-destination drain, and the protection case runs
three pairs; the median is the figure and the table shows min-max beside it. The peer needs Node.js
20.18.1 or newer (its npm packages are installed into bench/peer on first use); without it
the peer's figures are left out with a note.

Every sink verifies what it receives: each request's Standard Webhooks signature (the
peer signs as webhookd does), each webhook-id answered 2xx at most once per destination,
and after a drain, as many distinct ids as deliveries. A bad signature, a duplicate or a
missing delivery makes the figures of that run INVALID: they get no `name: value` line and
the run exits 1.

Every load is bounded in count and time (a drain stops after at most 10 minutes and then
reports its rate so far); every process started is killed at exit.
Environment: WEBHOOKD_SKIP_APT skips the package check; BENCH_LOAD_SECONDS,
BENCH_DELIVERIES, BENCH_BACKLOG, BENCH_PLATFORM_EVENTS (events of the platform case,
five deliveries each), BENCH_STEP_SECONDS (a sustained step) and BENCH_COST_EVENTS (the
costs case's N, default 20,000), BENCH_HISTORY_EVENTS (the privacy case's history) and
BENCH_PURGE_EVENTS (its purged events, default 100,000), BENCH_DROP_EVENTS (each
dropped day of the retention case) and BENCH_FEED_WAITING (the feeds case's unread
messages) override the sizes (for trying the program out).
"""

# The figures' help, each scenario's own, in the report's order.
HELP_ORDER = [ingest, catalog, delivery, peer, sustained, e2e, backlog, protection, fifo, feeds, proxy,
              receivers, fairness, tracing, platform, costs, privacy, retention, brokers]


def usage() -> str:
    figures = "".join(s.HELP for s in HELP_ORDER)
    only = "\n".join(s.ONLY for s in (catalog, proxy, ha, sustained, e2e, tracing, delivery, peer,
                                      costs, privacy, retention, brokers, fifo, feeds))
    return f"{USAGE}\n{figures}{SIZES}\n{only}\n\n{soak.HELP}\n\n{TRAILER}"


def fail(message: str) -> None:
    print(f"scripts/bench: {message}", file=sys.stderr)
    sys.exit(2)


def parse(argv, cfg: Config) -> None:
    only_next = profile_next = False
    for arg in argv:
        if profile_next:
            cfg.profile_dir, profile_next = arg, False
        elif only_next:
            if arg not in ONLY:
                fail(f"--only takes one of {ONLY_KEYS} (try --help)")
            cfg.only, only_next = arg, False
        elif arg == "--soak":
            cfg.soak = True
        elif arg == "--only":
            only_next = True
        elif arg == "--profile":
            profile_next = True
        elif arg.isdigit() and len(arg) <= 2:
            if not cfg.soak:
                fail("a number only follows --soak")
            cfg.soak_minutes = int(arg)
        elif arg in ("-h", "--help"):
            print(usage(), end="")
            sys.exit(0)
        elif arg == "--quick":
            cfg.quick = True
        else:
            fail(f"unknown argument '{arg}' (try --help)")
    if only_next:
        fail(f"--only needs a section: one of {ONLY_KEYS}")
    if profile_next:
        fail("--profile needs a directory")
    if cfg.profile_dir and cfg.only != "costs":
        fail("--profile goes with --only costs")


def build(root: Path) -> None:
    """The package check of scripts/lib/common.sh (and perf and pidstat, which the costs
    case's --profile runs), then Release into build-bench/."""
    subprocess.run(["bash", "-c", 'source "$0/scripts/lib/common.sh" && ensure_packages'
                    ' linux-perf sysstat', str(root)], check=True)
    log("building (Release) into build-bench/")
    subprocess.run(["cmake", "-S", ".", "-B", "build-bench", "-DCMAKE_BUILD_TYPE=Release",
                    "-DWEBHOOKD_TESTS=OFF", "-DWEBHOOKD_BENCH=ON"], cwd=root, check=True,
                   stdout=subprocess.DEVNULL)
    subprocess.run(["cmake", "--build", "build-bench", f"-j{len(os.sched_getaffinity(0))}",
                    "--target", "webhookd", "bench_hello", "bench_sink", "bench_load"],
                   cwd=root, check=True, stdout=subprocess.DEVNULL)


def measure(b) -> int:
    env_lines = environment(b)
    if b.cfg.soak:
        return soak.run(b)
    if b.cfg.only:
        scenario = ONLY[b.cfg.only]
        part = getattr(scenario, "alone", scenario.measure)(b)
    else:
        part = full.run(b)
    return b.figs.report(env_lines, part, load_avg())


def exit_on(signum, _frame):
    # SystemExit unwinds through the finally below: every process started is stopped.
    sys.exit(128 + signum)


def main() -> int:
    cfg = Config(root=Path(__file__).resolve().parent.parent)
    parse(sys.argv[1:], cfg)
    cfg.size()
    try:
        build(cfg.root)
    except subprocess.CalledProcessError as e:
        print(f"error: {' '.join(map(str, e.cmd))} failed (exit {e.returncode})", file=sys.stderr)
        return 1
    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, exit_on)
    b = Bench(cfg)
    try:
        b.open()
        return measure(b)
    except BenchError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    finally:
        b.close()


if __name__ == "__main__":
    sys.exit(main())
