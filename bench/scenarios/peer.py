"""The peer: graphile-worker (npm, pinned in bench/peer) draining the same N jobs to the
same sink on the same cluster, as it is and with its task recording each attempt."""

import subprocess

from harness.figures import Part
from harness.log import log
from harness.processes import head, tail
from harness.stats import field, median, num, ratio, spread

HELP = """\
  peer_per_s              the peer, graphile-worker (npm, pinned in bench/peer) tuned as its
                          authors tune it for throughput (pool of concurrency + 1, local
                          queue, batched completion; an undici keep-alive POST a job, signed
                          as webhookd signs), draining N pre-loaded jobs (VACUUM ANALYZE
                          and CHECKPOINT first, as for webhookd) to the same sink on the
                          same cluster at concurrency 8, 16, 32, 64 and 128: the best,
                          measured twice more, the median of three
  delivery_vs_peer        delivery_per_s / peer_per_s
  recording_peer_per_s    the same peer doing the same work webhookd does per delivery: its
                          task, after the POST, inserts the attempt (status, duration,
                          response body excerpt) into its own table, a statement of its
                          own on the worker's pool (two more clients in it). The same N,
                          sink, signing, preparation and sweep; attempts == N is checked
  delivery_vs_recording_peer  delivery_per_s / recording_peer_per_s (each at its best
                          concurrency)
"""

ONLY = """\
--only peer runs the sink's bound, the delivery drains and both peers' drains: the
comparisons alone."""

CONCURRENCIES = (8, 16, 32, 64, 128)
# undici 7 needs Node.js 20.18.1 (graphile-worker 0.18 asks for 22 and runs on 20).
NODE_CHECK = """const [a, b, c] = process.versions.node.split(".").map(Number);
process.exit(a > 20 || (a == 20 && (b > 18 || (b == 18 && c >= 1))) ? 0 : 1)"""


def ready(b) -> str:
    """Node.js and bench/peer's packages (installed on first use): graphile-worker's
    version, or "" with a note when the peer cannot run."""
    directory = b.root / "bench" / "peer"
    try:
        node_ok = subprocess.run(["node", "-e", NODE_CHECK]).returncode == 0
    except OSError:
        node_ok = False
    if not node_ok:
        b.note("peer: not measured: Node.js 20.18.1 or newer is not installed")
        return ""
    if not (directory / "node_modules" / "graphile-worker").is_dir():
        log("peer: installing its npm packages (npm ci in bench/peer)")
        npm_log = b.work / "peer-npm.log"
        with open(npm_log, "w") as out:
            if subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"],
                              cwd=directory, stdout=out, stderr=subprocess.STDOUT).returncode:
                b.note(f"peer: not measured: npm ci failed: {' '.join(tail(npm_log, 3).splitlines())}")
                return ""
    package = directory / "node_modules" / "graphile-worker" / "package.json"
    return subprocess.run(["node", "-p", f"require('{package}').version"],
                          stdout=subprocess.PIPE, text=True).stdout.strip()


# The two peers: (the name of their runs, the figures a failed run makes INVALID, the
# task's option).
PLAIN = ("peer", ("peer_per_s", "delivery_vs_peer"), [])
RECORDING = ("recording-peer", ("recording_peer_per_s", "delivery_vs_recording_peer"),
             ["--record"])


def drain(b, c: int, kind=PLAIN) -> str:
    """One drain of N jobs by graphile-worker at concurrency C on a fresh database; its
    rate (0 after a failure, which makes the peer's figures INVALID)."""
    name, figures, option = kind
    jobs = b.cfg.deliveries  # the same N as webhookd's drains, prepared the same way
    b.cluster.createdb("bench_peer")
    b.sink.reset()
    before = b.sink.stats_line()
    err = b.work / f"{name}.err"
    argv = ["node", b.root / "bench" / "peer" / "peer.mjs",
            "--connection", b.cluster.url("bench_peer"), "--jobs", jobs, "--concurrency", c,
            "--sink", f"http://127.0.0.1:{b.sink.port}/ok/peer", "--secret", b.secret,
            "--timeout", 600, *option]
    line, ok = "", False
    with open(err, "w") as errors:
        try:
            out = subprocess.run([str(a) for a in argv], stdout=subprocess.PIPE, stderr=errors,
                                 text=True, timeout=660)
            line, ok = out.stdout.strip(), out.returncode == 0
        except subprocess.TimeoutExpired:
            pass
    if not ok:
        b.invalidate(f"{name} at {c}: {line or 'no result'} {head(err, 300)}", *figures)
    elif field(line, "failed") != "0":
        b.invalidate(f"{name} at {c}: {field(line, 'failed')} jobs failed", *figures)
    elif option and field(line, "attempts") != str(jobs):
        b.invalidate(f"{name} at {c}: {field(line, 'attempts')} attempts recorded for {jobs}"
                     " jobs", *figures)
    b.sink.verified(f"{name}-{c}", jobs, 0, before)
    b.cluster.dropdb("bench_peer")
    log(f"{name} at {c}: {line}")
    return field(line or "per_s=0", "per_s") or "0"


def swept(b, kind) -> tuple:
    """Each concurrency once, then the best twice more; (median rate, spread, best
    concurrency, the sweep's detail)."""
    best_c, best_rate, sweep = None, "0", []
    for c in CONCURRENCIES:
        first = drain(b, c, kind)
        sweep.append(f"{c}: {first}/s")
        if num(first) > num(best_rate):
            best_c, best_rate = c, first
    best_c = best_c or CONCURRENCIES[0]
    rates = [best_rate, drain(b, best_c, kind), drain(b, best_c, kind)]
    rate = median(rates)
    detail = (f"{', '.join(sweep)}; at {best_c}: {' '.join(rates)} (median {rate},"
              f" {spread(rates)})")
    return rate, spread(rates), best_c, detail


def measure(b, delivery_rate: str) -> tuple:
    """The plain peer's sweep, then the recording peer's; (Part, the plain peer's best
    concurrency or None, graphile-worker's version)."""
    part = Part()
    version = ready(b)
    rate, best_c, rates_spread, detail = "", None, "", "not measured"
    rec_rate, rec_spread, rec_detail = "", "", "not measured"
    if version:
        log(f"peer: graphile-worker {version}, {b.cfg.deliveries} jobs, concurrency"
            f" {' '.join(map(str, CONCURRENCIES))}, then twice more at the best; then the same"
            " with the task recording each attempt")
        rate, rates_spread, best_c, sweep = swept(b, PLAIN)
        detail = (f"graphile-worker {version} (pool concurrency + 1, local queue, batched"
                  f" completion, undici keep-alive, signed), {b.cfg.deliveries} jobs: {sweep}")
        rec_rate, rec_spread, _, rec_sweep = swept(b, RECORDING)
        rec_detail = (f"the same, its task inserting each attempt (pool concurrency + 3),"
                      f" {b.cfg.deliveries} jobs: {rec_sweep}")
    if not version:
        b.invalidate("peer: the peer could not run (see the notes)", *PLAIN[1], *RECORDING[1])
    part.add("peer_per_s", rate or "n/a", "bound", rates_spread)
    part.add("delivery_vs_peer", ratio(delivery_rate, rate) if rate else "n/a", ">= 1.5")
    part.add("recording_peer_per_s", rec_rate or "n/a", "bound", rec_spread)
    part.add("delivery_vs_recording_peer",
             ratio(delivery_rate, rec_rate) if rec_rate else "n/a", ">= 3")
    part.details["peer"] = f"peer           {detail}"
    part.details["recording peer"] = f"recording peer {rec_detail}"
    return part, best_c, version


def alone(b) -> Part:
    """--only peer: the delivery drains (for delivery_per_s), then both peers."""
    from scenarios import delivery  # the one case that needs another's figure

    part = delivery.alone(b)
    peer_part, _, _ = measure(b, part.figures["delivery_per_s"][0])
    part.figures.update(peer_part.figures)
    part.details.update(peer_part.details)
    return part
