"""End to end: `webhookd all` at 1,000 events/s, from the scheduled send time to the
request's arrival at a recording sink."""

from harness.figures import Part
from harness.load import load
from harness.log import log
from harness.processes import hwm_mib
from harness.stats import field

HELP = """\
  e2e_p50_ms/p99_ms       `webhookd all`, 1,000 events/s open loop: scheduled send time to
                          the request's arrival at the sink, matched by webhook-id
"""


def measure(b) -> tuple:
    """(Part, the peak RSS of `webhookd all` in MiB)."""
    rate = b.cfg.e2e_rate
    log(f"end to end: webhookd all, {rate} events/s, {b.cfg.load_s} s")
    db = b.new_db("bench_e2e")
    rec_proc, rec = b.tool_sink("e2e-sink", "--record", 1, "--secret", b.secret)
    proc, port = b.start_webhookd("all-e2e", "all", db)
    b.create_destination(port, f"http://127.0.0.1:{rec.port}/e2e")
    load(b, "e2e-warmup", "--port", port, "--key", b.key, "--duration", 1, "--rate", rate)
    line = load(b, "e2e", "--port", port, "--key", b.key, "--duration", b.cfg.load_s, "--rate",
                rate, "--e2e-sink-port", rec.port)
    hwm = hwm_mib(proc.pid)
    if field(line, "unmatched") != "0":
        stuck = ";".join(db.sql("unfinished_deliveries").splitlines())
        b.invalidate(f"e2e: {field(line, 'unmatched')} events never reached the sink in time;"
                     f" deliveries not succeeded (status|attempts|last error|count): {stuck};",
                     "e2e_p50_ms", "e2e_p99_ms")
    b.procs.stop(proc)
    rec.clean("e2e", "e2e_p50_ms", "e2e_p99_ms")
    b.procs.stop(rec_proc)
    db.drop()
    part = Part()
    part.add("e2e_p50_ms", field(line, "e2e_p50_ms"), "<= 5")
    part.add("e2e_p99_ms", field(line, "e2e_p99_ms"), "<= 50")
    part.details["e2e"] = f"e2e            {line}"
    return part, hwm
