"""Sustained end-to-end load: the highest open-loop rate `webhookd all` keeps, and the
same climb for the peer."""

import subprocess
import time

from harness.figures import Part
from harness.log import log
from harness.processes import tail
from harness.stats import field, num, ratio
from scenarios import peer

HELP = """\
  sustained_per_s         the highest of 250, 500, 1,000, 2,000, 3,000, 4,000, 6,000, 8,000, 12,000
                          and 16,000 events/s (tried in order, load seconds each, open loop,
                          256 connections) at which `webhookd all` (default settings, one
                          destination at a recording sink) kept every event sent, accepted
                          and delivered with the e2e p99 within 100 ms, so that the backlog
                          did not grow; a failed step is tried once more
  sustained_vs_peer       sustained_per_s over the same climb for the peer: graphile-worker
                          at its best drain concurrency behind a minimal Node.js ingest
                          (bench/peer/ingest.mjs: POST /v1/events -> add_job -> 202), same
                          sink, same cluster
"""

ONLY = """\
--only sustained runs the sustained climb alone (the peer at concurrency 64 then, as no
drain chose its best)."""

# The rates tried, in order; the first that fails ends the climb.
STEPS = (250, 500, 1000, 2000, 3000, 4000, 6000, 8000, 12000, 16000)


def step(b, name, port, key, rate, rec) -> tuple:
    """One open-loop step of LOAD_S at RATE events/s against the ingest on PORT (KEY: an
    API key or None), matched at the recording sink REC; (held, line). It held when every
    scheduled event was sent, accepted and delivered and the e2e p99 stayed within 100 ms:
    the backlog did not grow."""
    rec.reset()
    auth = ["--key", key] if key else []
    # Enough connections that the generator keeps the pace at the highest step.
    argv = [b.tools / "bench_load", "--connections", 256, "--port", port, *auth,
            "--duration", b.cfg.load_s, "--rate", rate, "--e2e-sink-port", rec.port,
            "--e2e-wait", 20]
    line = ""
    with open(b.work / f"{name}-{rate}.err", "w") as errors:
        try:
            line = subprocess.run([str(a) for a in argv], stdout=subprocess.PIPE, stderr=errors,
                                  text=True, timeout=b.cfg.load_s + 90).stdout.strip()
        except subprocess.TimeoutExpired:
            pass
    log(f"{name} at {rate}/s: {line}")
    p99 = field(line, "e2e_p99_ms")
    held = (field(line, "scheduled") == field(line, "sent") and field(line, "failed") == "0"
            and field(line, "unmatched") == "0" and p99 != "" and num(p99) <= 100)
    return held, line


def climb(b, name, port, key, rec) -> tuple:
    """The steps in order until one fails; (the highest rate that held or 0, detail). A
    failed step is tried once more: on a shared machine one stall of a few hundred
    milliseconds fails a 5 s step. Both systems climb the same way, and the detail says
    which steps needed their second try."""
    best, detail = 0, ""
    for rate in STEPS:
        held = 0
        for attempt in (1, 2):
            ok, line = step(b, name, port, key, rate, rec)
            if ok:
                held = attempt
                break
        if not held:
            detail += (f"{rate}/s failed (p99 {field(line, 'e2e_p99_ms')} ms, sent"
                       f" {field(line, 'sent')} of {field(line, 'scheduled')}, failed"
                       f" {field(line, 'failed')}, unmatched {field(line, 'unmatched')})")
            break
        best = rate
        detail += f"{rate}/s p99 {field(line, 'e2e_p99_ms')} ms"
        detail += "; " if held == 1 else " (second try); "
    return best, detail


def peer_climb(b, rec, c: int, version: str) -> tuple:
    """graphile-worker at concurrency C behind bench/peer/ingest.mjs; (rate or "", detail)."""
    b.cluster.createdb("bench_peer_sustained")
    url = b.cluster.url("bench_peer_sustained")
    script = b.root / "bench" / "peer"
    worker = b.procs.start("sustained-peer-worker", [
        "node", script / "peer.mjs", "--serve", "--connection", url, "--concurrency", c,
        "--sink", f"http://127.0.0.1:{rec.port}/peer", "--secret", b.secret])
    # A pool of 64: each add_job is a commit of its own, so the pool bounds the commits in
    # flight that PostgreSQL can flush together.
    ingest = b.procs.start("sustained-peer-ingest", [
        "node", script / "ingest.mjs", "--connection", url, "--port", 0, "--pool", 64])
    log_path, port = b.procs.log_of("sustained-peer-ingest"), ""
    for _ in range(200):
        lines = log_path.read_text().splitlines() if log_path.exists() else []
        port = next((line[5:] for line in lines if line.startswith("port=")), "")
        if port or ingest.poll() is not None:
            break
        time.sleep(0.1)
    rate, detail = "", "not measured"
    if not port:
        b.invalidate("sustained: the peer's ingest did not start:"
                     f" {' '.join(tail(log_path, 3).splitlines())}", "sustained_vs_peer")
    else:
        rate, climbed = climb(b, "sustained-peer", int(port), None, rec)
        detail = f"graphile-worker {version} at concurrency {c}: {climbed}"
        rec.clean("sustained-peer", "sustained_vs_peer")
    b.procs.stop(ingest)
    b.procs.stop(worker)
    b.cluster.dropdb("bench_peer_sustained")
    return rate, detail


def measure(b, best_c=None, version=None) -> Part:
    """The climb for `webhookd all` (one destination at a recording sink, the default
    configuration), then for the peer at its best drain concurrency (BEST_C, else 64)."""
    log(f"sustained: events -> receiver at {' '.join(map(str, STEPS))} events/s, {b.cfg.load_s} s"
        " each, until e2e p99 > 100 ms; webhookd all, then the peer")
    rec_proc, rec = b.tool_sink("sustained-sink", "--record", 1, "--secret", b.secret)
    db = b.new_db("bench_sustained")
    proc, port = b.start_webhookd("sustained-all", "all", db)
    b.create_destination(port, f"http://127.0.0.1:{rec.port}/sustained")
    rate, detail = climb(b, "sustained-webhookd", port, b.key, rec)
    b.procs.stop(proc)
    rec.clean("sustained-webhookd", "sustained_per_s", "sustained_vs_peer")
    db.drop()
    peer_rate, peer_detail = "", "not measured"
    version = version or peer.ready(b)
    if version:
        peer_rate, peer_detail = peer_climb(b, rec, best_c or 64, version)
    b.procs.stop(rec_proc)
    part = Part()
    part.add("sustained_per_s", rate)
    part.add("sustained_vs_peer", ratio(rate, peer_rate) if peer_rate != "" else "n/a", ">= 3")
    part.details["sustained"] = f"sustained      webhookd all: {detail}"
    part.details["sustained peer"] = f"sustained peer {peer_detail}"
    return part
