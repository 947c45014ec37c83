"""Platform size: the read side (/metrics, stats, every list route) of a database of
millions of deliveries."""

import re
import time
from datetime import datetime, timedelta, timezone

from harness import http
from harness.figures import Part
from harness.log import die, log
from harness.stats import highest, median, num, percentile

HELP = """\

  metrics_scrape_ms       at platform size (bench/sql/platform.sql: 100,000 destinations
                          of 10,000 tenants, 5 deliveries per event, a tenth of them
                          pending, as many attempts, a month of history), `webhookd
                          server`: GET /metrics when its cached gauges have run out, so
                          the time includes their refresh: the slowest of three
  stats_ms                GET /v1/admin/stats?window=1h there: the median of ten
  list_p99_ms             the 99th percentile over the list routes there: deliveries
                          (by status, destination, tenant), events (by type, time,
                          tenant), dead letters (by destination, time), destinations,
                          tenants and a delivery's attempts, first and second pages,
                          ten times each
"""


def ago(**delta) -> str:
    return (datetime.now(timezone.utc) - timedelta(**delta)).strftime("%Y-%m-%dT%H:%M:%SZ")


def list_paths(dst: str, dlv: str) -> list:
    day_ago, half_day_ago, week_ago = ago(days=1), ago(hours=12), ago(days=7)
    return [
        "/v1/deliveries",
        "/v1/deliveries?status=pending",
        "/v1/deliveries?status=succeeded",
        "/v1/deliveries?status=dead_lettered",
        "/v1/deliveries?status=cancelled",
        f"/v1/deliveries?destination_id={dst}",
        f"/v1/deliveries?destination_id={dst}&status=pending",
        "/v1/deliveries?tenant_id=tenant-4242",
        "/v1/deliveries?tenant_id=tenant-4242&status=dead_lettered",
        "/v1/events",
        "/v1/events?type=order.created",
        f"/v1/events?after={day_ago}&before={half_day_ago}",
        "/v1/events?tenant_id=tenant-4242",
        "/v1/admin/dead-letters",
        f"/v1/admin/dead-letters?destination_id={dst}",
        f"/v1/admin/dead-letters?since={week_ago}",
        "/v1/destinations",
        "/v1/destinations?tenant_id=tenant-4242",
        "/v1/admin/tenants",
        f"/v1/deliveries/{dlv}/attempts",
    ]


class Reader:
    """GETs to `webhookd server` on PORT, timed (a fresh connection each, as curl)."""

    def __init__(self, b, port: int):
        self.b, self.port, self.last = b, port, b""

    def get_ms(self, path: str, auth=True) -> str:
        """The milliseconds of one GET; dies unless it answered 200."""
        status, self.last, seconds = http.request(self.port, path, headers=self.b.auth() if auth
                                                  else {}, timeout=60)
        if status != 200:
            die(f"platform: GET {path} answered {status:03d}:"
                f" {self.last[:300].decode(errors='replace')}")
        return f"{seconds * 1000:.2f}"

    def pages(self, paths) -> list:
        """Each first page, then the page after it (through its next_cursor)."""
        pages = []
        for path in paths:
            pages.append(path)
            self.get_ms(path)
            cursor = re.search(rb'"next_cursor":"([^"]*)"', self.last)
            if cursor:
                pages.append(f"{path}{'&' if '?' in path else '?'}cursor={cursor.group(1).decode()}")
        return pages


def measure(b) -> Part:
    events = b.cfg.platform_events
    deliveries = events * 5
    log(f"platform: {deliveries} deliveries of 100,000 destinations, {deliveries} / 10 pending,"
        " as many attempts")
    db = b.new_db("bench_platform")
    t0 = time.monotonic()
    db.sql("days", days=30)  # the month's days, as production has them
    db.sql("platform", destinations=100000, events=events, fanout=5, pending=deliveries // 10,
           attempts=deliveries // 10)
    load_s = int(time.monotonic() - t0)
    log(f"platform: loaded in {load_s} s")
    proc, port = b.start_webhookd("server-platform", "server", db)
    reader = Reader(b, port)
    metrics = []
    for run in (1, 2, 3):
        if run > 1:
            time.sleep(5.2)  # the gauges are cached for 5 s
        metrics.append(reader.get_ms("/metrics", auth=False))
    stats = [reader.get_ms("/v1/admin/stats?window=1h") for _ in range(10)]
    stats_day = reader.get_ms("/v1/admin/stats?window=24h")
    dst = "dst_" + db.query("SELECT min(id) + 4242 FROM webhookd.destinations")
    dlv = "dlv_" + db.query("SELECT max(id) FROM webhookd.deliveries")
    times, slowest, slowest_page = [], "0", ""
    for path in reader.pages(list_paths(dst, dlv)):
        for _ in range(10):
            ms = reader.get_ms(path)
            times.append(ms)
            if num(ms) > num(slowest):
                slowest, slowest_page = ms, path
    b.procs.stop(proc)
    db.drop()
    part = Part()
    part.add("metrics_scrape_ms", highest(metrics), "<= 50")
    part.add("stats_ms", median(stats), "<= 250")
    part.add("list_p99_ms", percentile(times, 0.99), "<= 25")
    part.details["platform"] = (
        f"platform       {deliveries} deliveries loaded in {load_s} s; /metrics"
        f" {' '.join(metrics)} ms; stats 1h median {median(stats)} ms (24h {stats_day} ms);"
        f" {len(times)} list pages: p50 {median(times)} ms, p99 {percentile(times, 0.99)} ms,"
        f" slowest {slowest} ms ({slowest_page})")
    return part
