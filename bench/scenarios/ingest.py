"""Ingest: bench_hello's bound, webhookd server's closed-loop and paced ingest, and a
tenant's ingest among 100,000 destinations of 10,000 other tenants."""

from harness.figures import Part
from harness.load import load, warm_and_load
from harness.log import log
from harness.stats import field, median, ratio, spread

HELP = """\
  hello_req_per_s         bench_hello (cpp-httplib set up like webhookd, 202, no database),
                          64 connections, closed loop: the bound for ingest
  ingest_events_per_s     POST /v1/events to `webhookd server`, 64 connections, one
                          matching destination, closed loop, same duration as hello
  ingest_vs_hello         the ratio of the two in one round (hello, then the ingest); the
                          median of three rounds, as are both tenants ratios below
  ingest_p50_ms/p99_ms    ingest latency at 2,000 events/s, open loop (from the scheduled
                          send time: no coordinated omission)
  ingest_tenants_per_s    as ingest_events_per_s, the events of tenant "bench" (20
                          destinations, one matching) among 100,000 destinations of
                          10,000 other tenants
  ingest_tenants_ratio    the ratio of the two
  tenants_flat_ratio      ingest_tenants_per_s over the same tenant's ingest with no other
                          tenant at all: the fan-out's cost is flat in the number of
                          tenants when it is about 1
"""


def hello(b) -> str:
    """bench_hello's closed-loop bound; its line."""
    proc = b.start_tool("hello", "bench_hello")
    line = warm_and_load(b, "hello", b.procs.listening_port(proc), key=False)
    b.procs.stop(proc)
    return line


def ingest(b, paced: bool) -> tuple:
    """The closed-loop ingest of ingest_events_per_s on a fresh database and, when PACED,
    the open-loop one at the paced rate after it; (line, paced line)."""
    db = b.new_db("bench_ingest")
    proc, port = b.start_webhookd("server", "server", db)
    b.create_destination(port, f"http://127.0.0.1:{b.sink.port}/ingest")
    line = warm_and_load(b, "ingest", port)
    paced_line = ""
    if paced:
        paced_line = load(b, "ingest-paced", "--port", port, "--key", b.key, "--duration",
                          b.cfg.load_s, "--rate", b.cfg.ingest_rate)
    b.procs.stop(proc)
    db.drop()
    return line, paced_line


def tenant(b, others: int) -> str:
    """The ingest of tenant "bench" (20 destinations, one matching) beside OTHERS
    destinations of OTHERS / 10 other tenants; its line."""
    db = b.new_db("bench_tenants")
    db.sql("tenants", others=others, sink=f"127.0.0.1:{b.sink.port}", secret=b.secret)
    proc, port = b.start_webhookd(f"server-tenants-{others}", "server", db)
    line = warm_and_load(b, f"ingest-tenants-{others}", port, "--tenant", "bench",
                         warmup=f"tenants-{others}")
    b.procs.stop(proc)
    db.drop()
    return line


def measure(b) -> Part:
    """Each ratio is taken within one round (hello, the plain ingest, the tenant alone, the
    tenant among 100,000 destinations, minutes apart at most); the figure is the median of
    three rounds. The second round measures the tenant among the others first, so a
    machine that slows (or speeds up) through a round does not favour one side of
    tenants_flat_ratio in every round."""
    cfg = b.cfg
    log(f"ingest: three rounds of bench_hello, webhookd server (one destination), tenant bench"
        f" alone and among 100,000 destinations of 10,000 tenants; {cfg.connections}"
        f" connections, {cfg.load_s} s each; the first round also at {cfg.ingest_rate}/s")
    hello_rates, ingest_rates, alone_rates, tenants_rates = [], [], [], []
    over_hello, over_ingest, flat = [], [], []
    paced_line = ""
    for run in (1, 2, 3):
        hello_line = hello(b)
        hello_rates.append(field(hello_line, "per_s"))
        ingest_line, line = ingest(b, run == 1)
        if run == 1:
            paced_line = line
        ingest_rates.append(field(ingest_line, "per_s"))
        for others in ((100000, 0) if run == 2 else (0, 100000)):
            rates = tenants_rates if others else alone_rates
            rates.append(field(tenant(b, others), "per_s"))
        over_hello.append(ratio(ingest_rates[-1], hello_rates[-1]))
        over_ingest.append(ratio(tenants_rates[-1], ingest_rates[-1]))
        flat.append(ratio(tenants_rates[-1], alone_rates[-1]))
    part = Part()
    part.add("hello_req_per_s", median(hello_rates), "bound", spread(hello_rates))
    part.add("ingest_events_per_s", median(ingest_rates), ">= 10000", spread(ingest_rates))
    part.add("ingest_vs_hello", median(over_hello), ">= 0.45", spread(over_hello))
    part.add("ingest_p50_ms", field(paced_line, "p50_ms"))
    part.add("ingest_p99_ms", field(paced_line, "p99_ms"), "<= 10")
    part.add("ingest_tenants_per_s", median(tenants_rates), "", spread(tenants_rates))
    part.add("ingest_tenants_ratio", median(over_ingest), ">= 0.90", spread(over_ingest))
    part.add("tenants_flat_ratio", median(flat), ">= 0.90", spread(flat))
    d = part.details
    d["hello"] = f"hello          three rounds: {' '.join(hello_rates)} /s; last: {hello_line}"
    d["ingest"] = (f"ingest         three rounds: {' '.join(ingest_rates)} /s (over hello"
                   f" {' '.join(over_hello)}); last: {ingest_line}")
    d["ingest paced"] = f"ingest paced   {paced_line}"
    d["tenant alone"] = f"tenant alone   three rounds: {' '.join(alone_rates)} /s"
    d["ingest tenants"] = (f"ingest tenants three rounds: {' '.join(tenants_rates)} /s (over the"
                           f" plain ingest {' '.join(over_ingest)}; over the tenant alone"
                           f" {' '.join(flat)})")
    return part
