"""End to end: `webhookd all` at 1,000 events/s, from the scheduled send time to the
request's arrival at a recording sink, three runs; the ingest's latency and the delivery
lag apart."""

from harness.figures import Part
from harness.load import load
from harness.log import log
from harness.processes import hwm_mib
from harness.stats import field, highest, median, num, spread

HELP = """\
  e2e_p50_ms/p99_ms       `webhookd all`, 1,000 events/s open loop: scheduled send time to
                          the request's arrival at the sink, matched by webhook-id. Three
                          runs, each on a fresh database and process: the median, min-max
  e2e_ingest_p50_ms/p99_ms  of the same runs, the ingest's part: the POST to its 202
  e2e_lag_p50_ms/p99_ms   and the delivery lag: the 202 to the arrival at the sink (below
                          0 when the webhook arrived before the client read its 202)
"""

ONLY = """\
--only e2e runs the three end-to-end runs alone."""

RUNS = 3
# (figure, bench_load's field, target)
FIGURES = (("e2e_p50_ms", "e2e_p50_ms", "<= 5"), ("e2e_p99_ms", "e2e_p99_ms", "<= 50"),
           ("e2e_ingest_p50_ms", "p50_ms", "<= 2"), ("e2e_ingest_p99_ms", "p99_ms", ""),
           ("e2e_lag_p50_ms", "lag_p50_ms", ""), ("e2e_lag_p99_ms", "lag_p99_ms", ""))
NAMES = tuple(name for name, _, _ in FIGURES)


def once(b, run: int, rec) -> tuple:
    """One run on a fresh database; (bench_load's line, the peak RSS in MiB)."""
    rate = b.cfg.e2e_rate
    db = b.new_db("bench_e2e")
    # Each database numbers its events from the same first id: the sink forgets the last
    # run's webhook-ids, or they would match this run's.
    rec.reset()
    proc, port = b.start_webhookd(f"all-e2e-{run}", "all", db)
    b.create_destination(port, f"http://127.0.0.1:{rec.port}/e2e")
    load(b, f"e2e-{run}-warmup", "--port", port, "--key", b.key, "--duration", 1, "--rate", rate)
    rec.quiet()
    rec.reset()
    line = load(b, f"e2e-{run}", "--port", port, "--key", b.key, "--duration", b.cfg.load_s,
                "--rate", rate, "--e2e-sink-port", rec.port)
    hwm = hwm_mib(proc.pid)
    if field(line, "unmatched") != "0":
        stuck = ";".join(db.sql("unfinished_deliveries").splitlines())
        b.invalidate(f"e2e-{run}: {field(line, 'unmatched')} events never reached the sink in"
                     " time; deliveries not succeeded (status|attempts|last error|count):"
                     f" {stuck};", *NAMES)
    b.procs.stop(proc)
    wrong = rec.since_reset(int(num(field(line, "ok"))))
    if wrong:
        b.invalidate(f"e2e-{run}: {wrong}", *NAMES)
    db.drop()
    return line, hwm


def measure(b) -> tuple:
    """(Part, the highest peak RSS of `webhookd all` over the runs, in MiB)."""
    log(f"end to end: webhookd all, {b.cfg.e2e_rate} events/s, {b.cfg.load_s} s, {RUNS} runs")
    rec_proc, rec = b.tool_sink("e2e-sink", "--record", 1, "--secret", b.secret)
    lines, hwms = [], []
    for run in range(1, RUNS + 1):
        line, hwm = once(b, run, rec)
        lines.append(line)
        hwms.append(hwm)
    b.procs.stop(rec_proc)
    part = Part()
    for name, key, target in FIGURES:
        values = [field(line, key) for line in lines]
        part.add(name, median(values), target, spread(values))
    part.details["e2e"] = "e2e            " + " | ".join(
        f"run {i}: {line}" for i, line in enumerate(lines, 1))
    return part, highest(hwms)


def alone(b) -> Part:
    return measure(b)[0]
