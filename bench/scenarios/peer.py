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
                          same cluster at concurrency 8, 16, 32, 64 and 128 once each,
                          as webhookd's sweep; then three drains at the best, each right
                          after one of webhookd's three at its best: their median
  delivery_vs_peer        the median of three paired ratios, webhookd's i-th drain at its
                          best over the peer's i-th, run right after it (min-max shown)
  recording_peer_per_s    the same peer doing the same work webhookd does per delivery: its
                          task, after the POST, inserts the attempt (status, duration,
                          response body excerpt) into its own table, a statement of its
                          own on the worker's pool (two more clients in it). The same N,
                          sink, signing, preparation and sweep; attempts == N is checked
  delivery_vs_recording_peer  the same paired ratios over the recording peer's drains
                          (each at its best concurrency, interleaved the same way)
"""

ONLY = """\
--only peer runs the sink's bound, the delivery drains and both peers' drains,
interleaved: the comparisons alone."""

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


def swept(b, kind) -> dict:
    """Each concurrency once, as webhookd's sweep: {kind, best_c, sweep (its detail), rates
    (the drains at the best, which again() adds, as webhookd's three after its sweep)}."""
    best_c, best_rate, sweep = None, "0", []
    for c in CONCURRENCIES:
        first = drain(b, c, kind)
        sweep.append(f"{c}: {first}/s")
        if num(first) > num(best_rate):
            best_c, best_rate = c, first
    return {"kind": kind, "best_c": best_c or CONCURRENCIES[0], "sweep": sweep, "rates": []}


def again(b, state: dict) -> None:
    """One more drain at the sweep's best concurrency."""
    state["rates"].append(drain(b, state["best_c"], state["kind"]))


def paired(b, state: dict, delivery_rates: list, target: str, part: Part) -> str:
    """The peer's figure (the median of its drains at the best, min-max) and the ratio of
    webhookd's to it: the median of the paired ratios (webhookd's i-th drain at its best
    over the peer's i-th, run right after it), min-max; the detail."""
    name, figures, _ = state["kind"]
    rates = state["rates"]
    ratios = [ratio(w, p) for w, p in zip(delivery_rates, rates)]
    if len(ratios) != len(rates) or any(r == "n/a" for r in ratios):
        b.invalidate(f"{name}: no paired ratio for each drain (webhookd {' '.join(delivery_rates)},"
                     f" the peer {' '.join(rates)})", figures[1])
    part.add(figures[0], median(rates), "bound", spread(rates))
    part.add(figures[1], median(ratios), target, spread(ratios))
    return (f"{', '.join(state['sweep'])}; at {state['best_c']}: {' '.join(rates)} (median"
            f" {median(rates)}, {spread(rates)}); paired with webhookd's drains"
            f" {' '.join(delivery_rates)}: ratios {' '.join(ratios)}")


def compared(b, sink_line: str) -> tuple:
    """webhookd's delivery drains and both peers', interleaved: webhookd's sweep, the plain
    peer's, the recording peer's, then three rounds of webhookd's drain at its best (and
    its slow-destination drain), the plain peer's at its best and the recording peer's;
    (the delivery Part, the peers' Part, the plain peer's best concurrency or None,
    graphile-worker's version)."""
    from scenarios import delivery  # the drains the peers' are paired with

    version = ready(b)
    states = []

    def after_sweep():
        if version:
            log(f"peer: graphile-worker {version}, {b.cfg.deliveries} jobs, concurrency"
                f" {' '.join(map(str, CONCURRENCIES))}, then the same with the task"
                " recording each attempt; then each peer at its best after each of"
                " webhookd's drains at its best")
            states.extend([swept(b, PLAIN), swept(b, RECORDING)])

    def between(_run):
        for state in states:
            again(b, state)

    delivery_part = delivery.measure(b, sink_line, between, after_sweep)
    part = Part()
    if not version:
        b.invalidate("peer: the peer could not run (see the notes)", *PLAIN[1], *RECORDING[1])
        for name in (*PLAIN[1], *RECORDING[1]):
            part.add(name, "n/a")
        part.details["peer"] = "peer           not measured"
        part.details["recording peer"] = "recording peer not measured"
        return delivery_part, part, None, version
    runs = delivery_part.runs["delivery"]
    plain, recording = states
    detail = paired(b, plain, runs, ">= 1.5", part)
    rec_detail = paired(b, recording, runs, ">= 3", part)
    part.details["peer"] = (f"peer           graphile-worker {version} (pool concurrency + 1,"
                            f" local queue, batched completion, undici keep-alive, signed),"
                            f" {b.cfg.deliveries} jobs: {detail}")
    part.details["recording peer"] = (f"recording peer the same, its task inserting each attempt"
                                      f" (pool concurrency + 3), {b.cfg.deliveries} jobs:"
                                      f" {rec_detail}")
    return delivery_part, part, plain["best_c"], version


def alone(b) -> Part:
    """--only peer: the sink's bound, then webhookd's delivery drains and both peers'."""
    from scenarios import delivery

    delivery_part, peer_part, _, _ = compared(b, delivery.sink_bound(b))
    delivery_part.figures.update(peer_part.figures)
    delivery_part.details.update(peer_part.details)
    return delivery_part
