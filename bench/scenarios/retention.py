"""Retention by day (docs/retention.md): what dropping a day of the history costs, alone
and beside a steady ingest."""

import os
import re
import threading
import time

from harness import wal
from harness.figures import Part
from harness.load import load
from harness.log import die, log
from harness.processes import tail
from harness.stats import field, ratio
from scenarios import privacy

HELP = """\
  retention_drop_s        a day 40 days old holding N events (BENCH_DROP_EVENTS, default
                          1,000,000; --quick 100,000), each with one succeeded delivery and
                          one attempt (bench/sql/history_day.sql, history.sql), dropped by
                          `webhookd server` with WEBHOOKD_RETENTION=30d at its first
                          round: the time its log reports for the carry, the five
                          detaches (CONCURRENTLY) and the drop, nothing else running
  retention_drop_wal_bytes
                          the WAL written from that server's start to the drop's log line:
                          the whole drop, whatever the day holds
  retention_drop_wal_per_event_bytes
                          the same per event of the day, beside purge_wal_per_event_bytes
                          (the row-by-row purge's, privacy case)
  retention_ingest_p99_ratio
                          ingest p99 at 1,000 events/s (open loop, LOAD_S seconds, one
                          `webhookd server` with WEBHOOKD_RETENTION=0) while a second
                          server drops a day of N events, over the same load's p99 just
                          before without a drop: target <= 2. INVALID when the drop did
                          not fall inside the load
"""

ONLY = """\
--only retention measures the retention_* figures alone (seeding the two days is most of
its time: BENCH_DROP_EVENTS=100000 for trying it out)."""

FIGURES = ["retention_drop_s", "retention_drop_wal_bytes", "retention_drop_wal_per_event_bytes",
           "retention_ingest_p99_ratio"]
DETAILS = ["drop", "drop under load"]

DROPPED = re.compile(rb'"msg":"dropped aged days of the history"[^\n]*?"ms":([0-9]+)')
RATE = 1000


def drop_events(b) -> int:
    n = int(os.environ.get("BENCH_DROP_EVENTS", 100000 if b.cfg.quick else 1000000))
    if n < 10000 or n % 100:
        die(f"BENCH_DROP_EVENTS={n}: a multiple of 100, at least 10,000")
    return n


def seed_day(db, n: int, days_back: int) -> float:
    """The day DAYS_BACK days ago, with N finished events; the seconds it took."""
    db.sql("history_day", days_back=days_back)
    return privacy.seed(db, n, days_back, days_back - 0.5, days_back=days_back)


def wait_drop(b, name: str, proc, limit_s: float = 300):
    """The milliseconds the server NAME's log reports for its first drop; None at LIMIT_S."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < limit_s:
        found = DROPPED.findall(b.procs.log_of(name).read_bytes())
        if found:
            return int(found[0])
        if proc.poll() is not None:
            die(f"{name} exited: {tail(b.procs.log_of(name), 5)}")
        time.sleep(0.05)
    return None


def drop_alone(b, part: Part) -> None:
    n = drop_events(b)
    log(f"retention: a day of {n} finished events 40 days old, dropped by webhookd server"
        " (WEBHOOKD_RETENTION=30d) with nothing else running")
    db = b.new_db("bench_drop")
    db.query("CREATE EXTENSION IF NOT EXISTS pg_walinspect")
    seconds = seed_day(db, n, 40)
    # A partitioned table has no storage of its own: the sum of its partitions'.
    rows = db.query("SELECT sum(pg_total_relation_size(p.relid)) FROM unnest(ARRAY["
                    "'webhookd.events', 'webhookd.deliveries', 'webhookd.attempts']::regclass[]) t(r),"
                    " pg_partition_tree(t.r) p WHERE p.isleaf")
    db.query("CHECKPOINT")
    lsn0 = wal.lsn(b.cluster, db.name)
    proc, _ = b.start_webhookd("drop-server", "server", db, WEBHOOKD_RETENTION="30d")
    ms = wait_drop(b, "drop-server", proc)
    lsn1 = wal.lsn(b.cluster, db.name)
    b.procs.stop(proc)
    left = db.query("SELECT count(*) FROM webhookd.history_days WHERE day <"
                    " (now() AT TIME ZONE 'UTC')::date")
    w = wal.between(b.cluster, db.name, lsn0, lsn1)
    db.drop()
    if ms is None or left != "0":
        b.invalidate(f"retention: the day was not dropped ({left} days left)", *FIGURES[:3])
        return
    part.add("retention_drop_s", f"{ms / 1000:.3f}")
    part.add("retention_drop_wal_bytes", w.bytes)
    part.add("retention_drop_wal_per_event_bytes", f"{w.bytes / n:.4f}")
    part.details["drop"] = (
        f"drop           a day of {n} events ({int(rows) / 2**20:.0f} MiB with indexes, seeded"
        f" in {seconds:.0f} s): {ms} ms, {w.bytes} B of WAL from the server's start"
        f" ({sum(w.records.values())} records, {w.fpi_bytes} B full-page images)")


def under_load(b, part: Part) -> None:
    n = drop_events(b)
    log(f"retention: ingest at {RATE}/s, then again while a second server drops a day of {n}")
    db = b.new_db("bench_drop_load")
    seed_day(db, n, 40)
    proc, port = b.start_webhookd("ingest-server", "server", db, WEBHOOKD_RETENTION="0")
    b.create_destination(port, f"http://127.0.0.1:{b.sink.port}/retention")
    args = ["--port", port, "--key", b.key, "--duration", b.cfg.load_s, "--rate", RATE]
    load(b, "retention-warmup", "--port", port, "--key", b.key, "--duration", 1, "--rate", RATE)
    # Both runs start a second server two seconds in, so that what the ratio shows is the
    # drop, not a process starting beside the load on a small machine: the first keeps
    # everything (WEBHOOKD_RETENTION=0), the second drops the day at its first round.
    def with_second(name: str, retention: str):
        started = {}

        def start():
            started["at"] = time.monotonic()
            started["proc"], _ = b.start_webhookd(name, "server", db, WEBHOOKD_RETENTION=retention)

        t0 = time.monotonic()
        timer = threading.Timer(2.0, start)
        timer.start()
        out = load(b, f"retention-{retention}", *args)
        elapsed = time.monotonic() - t0
        timer.join()
        return out, started, t0, elapsed

    without, idle, _, _ = with_second("idle-load-server", "0")
    if "proc" in idle:
        b.procs.stop(idle["proc"])
    with_drop, started, t0, load_s = with_second("drop-load-server", "30d")
    ms = wait_drop(b, "drop-load-server", started["proc"], 60) if "proc" in started else None
    if "proc" in started:
        b.procs.stop(started["proc"])
    b.procs.stop(proc)
    db.drop()
    p99_without, p99_with = field(without, "p99_ms"), field(with_drop, "p99_ms")
    inside = ms is not None and started["at"] - t0 + 0.5 + ms / 1000 < load_s
    if not inside:
        b.invalidate("retention: the drop did not fall inside the load", "retention_ingest_p99_ratio")
    else:
        part.add("retention_ingest_p99_ratio", ratio(p99_with, p99_without), "<= 2")
    part.details["drop under load"] = (
        f"drop under load ingest p99 {p99_without} ms without a drop, {p99_with} ms with one"
        f" ({ms} ms, begun {started.get('at', t0) - t0:.1f} s into {load_s:.1f} s)")


def measure(b) -> Part:
    part = Part()
    drop_alone(b, part)
    under_load(b, part)
    return part
