"""The peer: graphile-worker (npm, pinned in bench/peer) draining the same N jobs to the
same sink on the same cluster."""

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
"""

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


def drain(b, c: int) -> str:
    """One drain of N jobs by graphile-worker at concurrency C on a fresh database; its
    rate (0 after a failure, which makes the peer's figures INVALID)."""
    jobs = b.cfg.deliveries  # the same N as webhookd's drains, prepared the same way
    b.cluster.createdb("bench_peer")
    b.sink.reset()
    before = b.sink.stats_line()
    err = b.work / "peer.err"
    argv = ["node", b.root / "bench" / "peer" / "peer.mjs",
            "--connection", b.cluster.url("bench_peer"), "--jobs", jobs, "--concurrency", c,
            "--sink", f"http://127.0.0.1:{b.sink.port}/ok/peer", "--secret", b.secret,
            "--timeout", 600]
    line, ok = "", False
    with open(err, "w") as errors:
        try:
            out = subprocess.run([str(a) for a in argv], stdout=subprocess.PIPE, stderr=errors,
                                 text=True, timeout=660)
            line, ok = out.stdout.strip(), out.returncode == 0
        except subprocess.TimeoutExpired:
            pass
    if not ok:
        b.invalidate(f"peer at {c}: {line or 'no result'} {head(err, 300)}",
                     "peer_per_s", "delivery_vs_peer")
    elif field(line, "failed") != "0":
        b.invalidate(f"peer at {c}: {field(line, 'failed')} jobs failed",
                     "peer_per_s", "delivery_vs_peer")
    b.sink.verified(f"peer-{c}", jobs, 0, before)
    b.cluster.dropdb("bench_peer")
    log(f"peer at {c}: {line}")
    return field(line or "per_s=0", "per_s") or "0"


def measure(b, delivery_rate: str) -> tuple:
    """Each concurrency once, then the best twice more; (Part, the best concurrency or
    None, graphile-worker's version)."""
    part = Part()
    version = ready(b)
    rate, best_c, rates_spread, detail = "", None, "", "not measured"
    if version:
        log(f"peer: graphile-worker {version}, {b.cfg.deliveries} jobs, concurrency"
            f" {' '.join(map(str, CONCURRENCIES))}, then twice more at the best")
        best_rate, sweep = "0", []
        for c in CONCURRENCIES:
            first = drain(b, c)
            sweep.append(f"{c}: {first}/s")
            if num(first) > num(best_rate):
                best_c, best_rate = c, first
        best_c = best_c or CONCURRENCIES[0]
        rates = [best_rate, drain(b, best_c), drain(b, best_c)]
        rate, rates_spread = median(rates), spread(rates)
        detail = (f"graphile-worker {version} (pool concurrency + 1, local queue, batched"
                  f" completion, undici keep-alive, signed), {b.cfg.deliveries} jobs:"
                  f" {', '.join(sweep)}; at {best_c}: {' '.join(rates)}")
    part.add("peer_per_s", rate or "n/a", "bound", rates_spread)
    part.add("delivery_vs_peer", ratio(delivery_rate, rate) if rate else "n/a", ">= 3")
    tail_note = f" (median {rate}, {rates_spread})" if rates_spread else ""
    part.details["peer"] = f"peer           {detail}{tail_note}"
    return part, best_c, version
