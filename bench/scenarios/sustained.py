"""Sustained end-to-end load: the highest open-loop rate `webhookd all` keeps, and the
same climb for the peer behind each of its two ingests, three climbs each in alternating
order."""

import subprocess
import time

from harness.figures import Part
from harness.log import log
from harness.processes import tail
from harness.stats import field, median, num, ratio, spread
from scenarios import peer

HELP = """\
  sustained_per_s         the highest of 250, 500, 750 ... 2,000 (every 250), then 2,500,
                          3,000 ... 16,000 events/s (every 500; tried in order, 30 s each,
                          15 with --quick, open loop, 256 connections, after 3 s at 250
                          not counted) at which `webhookd all` (one
                          destination at a recording sink with max_in_flight 64, the
                          rest default) kept every event sent, accepted and delivered
                          with the e2e p99 within 100 ms, so that the backlog did not
                          grow; a failed step is tried once more. The median of three
                          climbs, run in turn with the peer's (webhookd first, then the
                          peer first, then webhookd first); each step's ingest p99 and
                          delivery lag (202 to arrival) p99 are in the details
  sustained_peer_per_s    the same climb for the peer: graphile-worker at its best drain
                          concurrency behind a minimal Node.js ingest (bench/peer/ingest.mjs,
                          a pool of 64): the better of its two ingests, each the median of
                          three climbs: one add_job per event
                          (sustained_peer_add_job_per_s) and add_jobs over the events of
                          1 ms (sustained_peer_add_jobs_per_s)
  sustained_vs_peer       sustained_per_s / sustained_peer_per_s; same sink, same cluster
"""

ONLY = """\
--only sustained runs the sustained climbs alone (the peer at concurrency 64 then, as no
drain chose its best)."""

# The rates tried, in order; the first that fails twice ends the climb.
STEPS = tuple(range(250, 2001, 250)) + tuple(range(2500, 16001, 500))
CLIMBS = 3
# The peer's two ingests: (name, --batch-ms).
INGESTS = (("add_job", 0), ("add_jobs", 1))
PEER_FIGURES = ("sustained_peer_per_s", "sustained_peer_add_job_per_s",
                "sustained_peer_add_jobs_per_s", "sustained_vs_peer")


# Seconds at the first rate before a climb, not counted: pools filled, code warm.
WARMUP_S = 3


def step(b, name, port, key, rate, rec, seconds=None) -> tuple:
    """One open-loop step of SECONDS (default STEP_S) at RATE events/s against the ingest
    on PORT (KEY: an API key or None), matched at the recording sink REC; (held, line). It
    held when every scheduled event was sent, accepted and delivered and the e2e p99
    stayed within 100 ms: the backlog did not grow; and when the sink, counting from the
    step's start, verified every signature, saw no webhook-id twice and exactly as many
    distinct ids as events were accepted. A step's check is its own: a held step with a
    duplicate or a bad signature is no held step."""
    rec.quiet()
    rec.reset()
    duration = seconds or b.cfg.step_s
    auth = ["--key", key] if key else []
    # Enough connections that the generator keeps the pace at the highest step.
    argv = [b.tools / "bench_load", "--connections", 256, "--port", port, *auth,
            "--duration", duration, "--rate", rate, "--e2e-sink-port", rec.port,
            "--e2e-wait", 20]
    line = ""
    with open(b.work / f"{name}-{rate}.err", "w") as errors:
        try:
            line = subprocess.run([str(a) for a in argv], stdout=subprocess.PIPE, stderr=errors,
                                  text=True, timeout=duration + 90).stdout.strip()
        except subprocess.TimeoutExpired:
            pass
    log(f"{name} at {rate}/s: {line}")
    p99 = field(line, "e2e_p99_ms")
    held = (field(line, "scheduled") == field(line, "sent") and field(line, "failed") == "0"
            and field(line, "unmatched") == "0" and p99 != "" and num(p99) <= 100)
    # The load has returned once every accepted event arrived (or its wait ran out): what
    # the sink holds now is this step's.
    wrong = rec.since_reset(int(num(field(line, "ok"))))
    if wrong:
        log(f"{name} at {rate}/s: {wrong}")
        held = False
        line += f" check={wrong.replace(' ', '_')}"
    return held, line


def ms(line: str, name: str) -> str:
    """A latency of LINE to a tenth of a millisecond, as the details print it."""
    value = field(line, name)
    return f"{num(value):.1f}" if value not in ("", "inf", "nan") else value or "?"


def climb(b, name, port, key, rec) -> tuple:
    """The steps in order until one fails; (the highest rate that held or 0, detail). A
    failed step is tried once more: on a shared machine one stall of a few hundred
    milliseconds can fail a step. Both systems climb the same way, and the detail says
    which steps needed their second try, and at each step the ingest's p99 (POST to 202)
    apart from the delivery lag's (202 to arrival). A few seconds at the first rate come
    first and are not counted: the peer's ingest opens its pool's connections and warms
    its code in them, which webhookd does before it listens."""
    step(b, f"{name}-warmup", port, key, STEPS[0], rec, WARMUP_S)
    best, detail = 0, ""
    for rate in STEPS:
        held = 0
        for attempt in (1, 2):
            ok, line = step(b, name, port, key, rate, rec)
            if ok:
                held = attempt
                break
        latencies = (f"ingest p99 {ms(line, 'p99_ms')}, lag p99 {ms(line, 'lag_p99_ms')},"
                     f" e2e p99 {ms(line, 'e2e_p99_ms')} ms")
        if not held:
            check = field(line, "check").replace("_", " ")
            detail += (f"{rate}/s failed ({latencies}, sent {field(line, 'sent')} of"
                       f" {field(line, 'scheduled')}, failed {field(line, 'failed')},"
                       f" unmatched {field(line, 'unmatched')}{'; ' + check if check else ''})")
            break
        best = rate
        detail += f"{rate}/s {latencies}"
        detail += "; " if held == 1 else " (second try); "
    return best, detail


def webhookd_climb(b, rec, run: int) -> tuple:
    """`webhookd all` on a fresh database, one destination at REC; (rate, detail)."""
    db = b.new_db("bench_sustained")
    proc, port = b.start_webhookd(f"sustained-all-{run}", "all", db)
    b.create_destination(port, f"http://127.0.0.1:{rec.port}/sustained")
    rate, detail = climb(b, f"sustained-webhookd-{run}", port, b.key, rec)
    b.procs.stop(proc)
    rec.clean(f"sustained-webhookd-{run}", "sustained_per_s", "sustained_vs_peer")
    db.drop()
    return rate, detail


def peer_climb(b, rec, c: int, ingest: tuple, run: int) -> tuple:
    """graphile-worker at concurrency C behind bench/peer/ingest.mjs (INGEST: its name and
    --batch-ms) on a fresh database; (rate or "", detail)."""
    label, batch_ms = ingest
    name = f"sustained-peer-{label}-{run}"
    b.cluster.createdb("bench_peer_sustained")
    url = b.cluster.url("bench_peer_sustained")
    script = b.root / "bench" / "peer"
    worker = b.procs.start(f"{name}-worker", [
        "node", script / "peer.mjs", "--serve", "--connection", url, "--concurrency", c,
        "--sink", f"http://127.0.0.1:{rec.port}/peer", "--secret", b.secret])
    # A pool of 64: each statement is a commit of its own, so the pool bounds the commits
    # in flight that PostgreSQL can flush together.
    ingest_proc = b.procs.start(f"{name}-ingest", [
        "node", script / "ingest.mjs", "--connection", url, "--port", 0, "--pool", 64,
        "--batch-ms", batch_ms])
    log_path, port = b.procs.log_of(f"{name}-ingest"), ""
    for _ in range(200):
        lines = log_path.read_text().splitlines() if log_path.exists() else []
        port = next((line[5:] for line in lines if line.startswith("port=")), "")
        if port or ingest_proc.poll() is not None:
            break
        time.sleep(0.1)
    rate, detail = "", "did not start"
    if not port:
        b.invalidate("sustained: the peer's ingest did not start:"
                     f" {' '.join(tail(log_path, 3).splitlines())}", *PEER_FIGURES)
    else:
        rate, detail = climb(b, name, int(port), None, rec)
        rec.clean(name, *PEER_FIGURES)
    b.procs.stop(ingest_proc)
    b.procs.stop(worker)
    b.cluster.dropdb("bench_peer_sustained")
    return rate, detail


def measure(b, best_c=None, version=None) -> Part:
    """Three rounds of climbs: `webhookd all` (one destination at a recording sink), the
    peer at its best drain concurrency (BEST_C, else 64) behind each ingest; webhookd
    first in the first and third round, last in the second, and the peer's two ingests
    in alternating order too."""
    log(f"sustained: events -> receiver from {STEPS[0]} to {STEPS[-1]} events/s (every 250"
        f" to 2,000, then every 500), {b.cfg.step_s} s each, until e2e p99 > 100 ms;"
        f" {CLIMBS} rounds of webhookd all and the peer behind each of its ingests")
    rec_proc, rec = b.tool_sink("sustained-sink", "--record", 1, "--secret", b.secret)
    version = version or peer.ready(b)
    c = best_c or 64
    rates, details = [], []
    peer_rates = {label: [] for label, _ in INGESTS}
    peer_details = {label: [] for label, _ in INGESTS}
    for run in range(1, CLIMBS + 1):
        climbers = [("webhookd", None)] + ([("peer", i) for i in INGESTS] if version else [])
        if run % 2 == 0:  # the peer first, its ingests in the other order too
            climbers.reverse()
        for system, ingest in climbers:
            if system == "webhookd":
                rate, detail = webhookd_climb(b, rec, run)
                rates.append(str(rate))
                details.append(f"climb {run}: {detail}")
            else:
                rate, detail = peer_climb(b, rec, c, ingest, run)
                peer_rates[ingest[0]].append(str(rate))
                peer_details[ingest[0]].append(f"climb {run}: {detail}")
    b.procs.stop(rec_proc)
    rate = median(rates)
    part = Part()
    part.add("sustained_per_s", rate, "", spread(rates))
    peer_rate = ""
    if version:
        medians = {label: median(values) for label, values in peer_rates.items()}
        peer_rate = max(medians.values(), key=num)
        part.add("sustained_peer_per_s", peer_rate, "bound")
        for label, values in peer_rates.items():
            part.add(f"sustained_peer_{label}_per_s", medians[label], "", spread(values))
    else:
        b.invalidate("sustained: the peer could not run (see the notes)", *PEER_FIGURES)
        for name in PEER_FIGURES[:3]:
            part.add(name, "n/a")
    if version and num(peer_rate) <= 0:
        # No step held by the peer is no comparison: the harness failed to load it, as
        # run J's 1 ms batches, one event each below 1,000/s, did.
        b.invalidate("sustained: the peer held no step behind either ingest, so there is"
                     " nothing to compare with (see its climbs in the details)",
                     "sustained_peer_per_s", "sustained_vs_peer")
    part.add("sustained_vs_peer", ratio(rate, peer_rate) if num(peer_rate) > 0 else "n/a",
             ">= 3")
    part.details["sustained"] = (f"sustained      webhookd all, {b.cfg.step_s} s steps:"
                                 f" {' | '.join(details)}")
    if version:
        how = {0: "one statement per event"}
        lines = [f"{label} ({how.get(batch, f'batched {batch} ms')}):"
                 f" {' | '.join(peer_details[label])}" for label, batch in INGESTS]
        part.details["sustained peer"] = (f"sustained peer graphile-worker {version} at"
                                          f" concurrency {c}: {' || '.join(lines)}")
    else:
        part.details["sustained peer"] = "sustained peer not measured"
    return part
