"""What exporting spans costs: every span sampled to a local collector."""

import time

from harness import http
from harness.drain import drain, preload
from harness.figures import Part
from harness.load import warm_and_load
from harness.log import log
from harness.processes import free_port
from harness.stats import field, median, num, ratio, spread

HELP = """\
  tracing_ingest_ratio    ingest_events_per_s with every span exported to a local
                          collector (OTEL_TRACES_SAMPLER=always_on) over the same without
                          export, run just before it: the median of three such pairs
  tracing_delivery_ratio  the same for the drain of delivery_per_s. Both INVALID when the
                          collector got nothing or a span was dropped
"""

ONLY = """\
--only tracing measures what exporting spans costs, every one sampled
(OTEL_TRACES_SAMPLER=always_on) to a local collector (a second bench_sink answering every
export 200): tracing_ingest_ratio is ingest_events_per_s with export over the same without,
tracing_delivery_ratio the drain of delivery_per_s with export over the same without, each
the median of three pairs. INVALID when the collector got no export, a span was dropped
(webhookd_trace_spans_dropped_total above 0) or a drain failed its checks."""


class Tracing:
    def __init__(self, b, collector_port: int):
        self.b = b
        self.valid = True
        self.otel = {"OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{collector_port}",
                     "OTEL_TRACES_SAMPLER": "always_on"}

    def check(self, name: str, port: int) -> None:
        """After a traced run: invalid unless spans were exported and none dropped."""
        counts = {}
        for line in http.get_text(port, "/metrics", timeout=10).splitlines():
            words = line.split()
            if len(words) >= 2 and words[0] in ("webhookd_trace_spans_exported_total",
                                                "webhookd_trace_spans_dropped_total"):
                counts[words[0]] = int(num(words[1]))
        exported = counts.get("webhookd_trace_spans_exported_total", 0)
        dropped = counts.get("webhookd_trace_spans_dropped_total", 0)
        log(f"{name}: {exported} spans exported, {dropped} dropped")
        if exported == 0 or dropped != 0:
            self.b.note(f"{name}: {exported} spans exported, {dropped} dropped")
            self.valid = False

    def ingest(self, traced: int) -> str:
        """The ingest of ingest_events_per_s, with export when TRACED; its rate."""
        b, name = self.b, f"ingest-tracing-{traced}"
        db = b.new_db("bench_tracing")
        proc, port = b.start_webhookd(f"server-{name}", "server", db,
                                      **(self.otel if traced else {}))
        b.create_destination(port, f"http://127.0.0.1:{b.sink.port}/ingest")
        line = warm_and_load(b, name, port)
        if field(line, "failed") != "0":
            b.note(f"{name}: failed requests: {line}")
            self.valid = False
        if traced:
            time.sleep(1.5)  # export runs behind ingest: the last batch leaves after its delay
            self.check(name, port)
        b.procs.stop(proc)
        db.drop()
        return field(line, "per_s")

    def drain(self, traced: int) -> str:
        """The drain of delivery_per_s, with export when TRACED; its rate."""
        b, n = self.b, self.b.cfg.deliveries
        db = b.new_db("bench_tracing")
        preload(b, db, n)
        if traced:
            port = free_port()
            done = drain(b, "delivery-tracing-1", "worker", n, db,
                         env={**self.otel, "WEBHOOKD_WORKER_ADDR": f"127.0.0.1:{port}"},
                         hook=lambda name: self.check(name, port))
        else:
            done = drain(b, "delivery-tracing-0", "worker", n, db)
        self.valid = self.valid and done.valid
        db.drop()
        return done.rate


def pairs(case) -> tuple:
    offs, ons, ratios = [], [], []
    for _ in (1, 2, 3):
        offs.append(case(0))
        ons.append(case(1))
        ratios.append(ratio(ons[-1], offs[-1]))
    return offs, ons, ratios


def measure(b) -> Part:
    """A second bench_sink as the collector, then three pairs of each case."""
    collector_proc, collector = b.tool_sink("collector")
    t = Tracing(b, collector.port)
    log(f"tracing: ingest without and with span export, three pairs; then the drain of"
        f" {b.cfg.deliveries}, three pairs")
    ingest_off, ingest_on, ingest_ratios = pairs(t.ingest)
    drain_off, drain_on, drain_ratios = pairs(t.drain)
    exports = field(http.get_text(collector.port, "/stats"), "ok") or "0"
    b.procs.stop(collector_proc)
    if exports == "0":
        b.note("tracing: the collector got no export")
        t.valid = False
    part = Part()
    part.add("tracing_ingest_ratio", median(ingest_ratios) if t.valid else "INVALID", ">= 0.9",
             spread(ingest_ratios))
    part.add("tracing_delivery_ratio", median(drain_ratios) if t.valid else "INVALID", ">= 0.9",
             spread(drain_ratios))
    part.details["tracing"] = (f"tracing        every span sampled, {exports} export requests to a"
                               f" local collector: ingest without {' '.join(ingest_off)} /s, with"
                               f" {' '.join(ingest_on)} /s; drain without {' '.join(drain_off)} /s,"
                               f" with {' '.join(drain_on)} /s")
    return part
