"""Tenant fairness: a quiet tenant's latency beside a noisy tenant's backlog."""

from harness.figures import Part
from harness.load import load
from harness.log import log
from harness.stats import field, num

HELP = """\
  fairness_p99_ms         e2e p99 of tenant "quiet" posting 50 events/s through `webhookd
                          all` while tenant "noisy" has N due deliveries over 20
                          destinations draining beside it; INVALID when a quiet event
                          never arrived or the noisy backlog did not move
"""


def measure(b) -> Part:
    n = b.cfg.deliveries
    log(f"fairness: tenant quiet at 50 events/s beside tenant noisy's {n} due deliveries,"
        " webhookd all")
    rec_proc, rec = b.tool_sink("fairness-sink", "--record", 1, "--secret", b.secret)
    db = b.new_db("bench_fairness")
    db.sql("fairness", n=n, sink=f"127.0.0.1:{b.sink.port}", quiet_sink=f"127.0.0.1:{rec.port}",
           secret=b.secret)
    proc, port = b.start_webhookd("fairness-all", "all", db)
    left_before = db.sql("ok_unfinished")
    line = load(b, "fairness", "--port", port, "--key", b.key, "--duration", b.cfg.load_s,
                "--rate", 50, "--tenant", "quiet", "--e2e-sink-port", rec.port, connections=4)
    left_after = db.sql("ok_unfinished")
    b.procs.stop(proc)
    rec.clean("fairness", "fairness_p99_ms")
    b.procs.stop(rec_proc)
    db.drop()
    if field(line, "unmatched") != "0":
        b.invalidate(f"fairness: {field(line, 'unmatched')} quiet events never arrived",
                     "fairness_p99_ms")
    if num(left_after) >= num(left_before):
        b.invalidate(f"fairness: the noisy backlog did not move ({left_before} then"
                     f" {left_after})", "fairness_p99_ms")
    part = Part()
    part.add("fairness_p99_ms", field(line, "e2e_p99_ms"), "<= 100")
    part.details["fairness"] = (f"fairness       quiet {line}; noisy due {left_before} ->"
                                f" {left_after} meanwhile")
    return part
