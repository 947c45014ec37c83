"""History and privacy: a subject's erasure in a long history of events, and the WAL
that retention's row-by-row purge writes per event (docs/privacy.md, docs/operations.md)."""

import json
import os
import re
import time

from harness import http, wal
from harness.figures import Part
from harness.log import die, log
from harness.processes import tail
from harness.stats import median, spread

HELP = """\
  erase_subject_ms        in a history of N events (BENCH_HISTORY_EVENTS, default
                          2,000,000; --quick 100,000) of the last 29 days, each with one
                          succeeded delivery and one attempt, about 1 % naming a subject
                          (bench/sql/history.sql), `webhookd server`: from POST
                          /v1/subjects/erase to GET /v1/erasures/{id} answering "done"
                          (polled every 5 ms, at most 60 s), for a subject of 100 events
                          spread over the history: the median of three subjects.
                          erase_subject_events (each erasure's count, must be 100) and
                          erase_subject_null_payloads (events without a payload after
                          the three, must be 300) are its checks: INVALID otherwise
  purge_wal_per_event_bytes
                          WAL written (pg_current_wal_lsn() moved) per event that
                          retention's row-by-row purge deleted: 100,000 finished events
                          (BENCH_PURGE_EVENTS) 40 days old, one delivery and one attempt
                          each, purged by `webhookd server` with WEBHOOKD_RETENTION=23h
                          (under a day, retention deletes row by row, as every retention
                          did before the history by day, every 5 s); autovacuum off on
                          those tables meanwhile, the VACUUM after it in the details
"""

ONLY = """\
--only privacy measures erase_subject_ms and purge_wal_per_event_bytes alone (the history's
seeding is most of its time: BENCH_HISTORY_EVENTS=200000 for trying it out)."""

ERASE = ["erase_subject_ms", "erase_subject_events", "erase_subject_null_payloads"]
PURGE = ["purge_wal_per_event_bytes"]
FIGURES = ["erase_subject_ms", "erase_subject_target", "erase_subject_events",
           "erase_subject_null_payloads", *PURGE]
DETAILS = ["history", "erasures", "purge"]

SUBJECTS = ("user:bench-42", "user:bench-43", "user:bench-44")  # bench/sql/history.sql's
CHUNK = 1000000  # events a statement of the seeding writes
TARGET_MS = 1000
PURGED = re.compile(rb'"msg":"purged expired events"[^\n]*?"count":([0-9]+)')
# The tables the purge deletes from (and the VACUUM after it reclaims).
PURGED_TABLES = "events, deliveries, attempts, event_subjects"


def history_events(b) -> int:
    n = int(os.environ.get("BENCH_HISTORY_EVENTS", 100000 if b.cfg.quick else 2000000))
    if n < 10000 or n % 100:
        die(f"BENCH_HISTORY_EVENTS={n}: a multiple of 100, at least 10,000")
    return n


def purge_events() -> int:
    n = int(os.environ.get("BENCH_PURGE_EVENTS", 100000))
    if n < 10000 or n % 100:
        die(f"BENCH_PURGE_EVENTS={n}: a multiple of 100, at least 10,000")
    return n


def seed(db, n: int, oldest_days: float, newest_days: float, days_back: int = 0) -> float:
    """bench/sql/history.sql in chunks (ids of the day DAYS_BACK days ago), then
    history_done.sql; the seconds it took."""
    t0 = time.monotonic()
    for first in range(1, n + 1, CHUNK):
        last = min(first + CHUNK - 1, n)
        db.sql("history", events=n, first=first, last=last, days_back=days_back,
               oldest_days=oldest_days, newest_days=newest_days)
        if n > CHUNK:
            log(f"privacy: {last} of {n} events written ({time.monotonic() - t0:.0f} s)")
    db.sql("history_done", events=n)
    return time.monotonic() - t0


def erase(b, port: int, subject: str):
    """(milliseconds from the POST to "done", the erasure's events); None at 60 s."""
    body = json.dumps({"subject": subject})
    t0 = time.perf_counter()
    status, data, _ = http.request(port, "/v1/subjects/erase", "POST", body,
                                   {**b.auth(), "Content-Type": "application/json"})
    if status != 202:
        die(f"privacy: POST /v1/subjects/erase answered {status:03d}: {data[:300]!r}")
    path = f"/v1/erasures/{json.loads(data)['id']}"
    while time.perf_counter() - t0 < 60:
        status, data, _ = http.request(port, path, headers=b.auth())
        if status != 200:
            die(f"privacy: GET {path} answered {status:03d}: {data[:300]!r}")
        answer = json.loads(data)
        if answer["status"] == "done":
            return (time.perf_counter() - t0) * 1000, answer["events"]
        time.sleep(0.005)
    return None


def erasures(b, part: Part) -> None:
    n = history_events(b)
    log(f"privacy: a history of {n} events (one delivery and one attempt each), then three"
        " erasures of a subject of 100 events")
    db = b.new_db("bench_history")
    seconds = seed(db, n, 29, 0)
    per_million = seconds / n * 1e6
    log(f"privacy: seeded in {seconds:.0f} s ({per_million:.0f} s per million events)")
    proc, port = b.start_webhookd("privacy-server", "server", db)
    times, counts = [], []
    for subject in SUBJECTS:
        result = erase(b, port, subject)
        if result is None:
            b.invalidate(f"privacy: the erasure of {subject} not done after 60 s", *ERASE)
            continue
        times.append(f"{result[0]:.1f}")
        counts.append(result[1])
    b.procs.stop(proc)
    nulls = int(db.query("SELECT count(*) FROM webhookd.events WHERE payload IS NULL"))
    indexed = db.query("SELECT count(*) FROM webhookd.event_subjects")
    db.drop()
    if any(c != 100 for c in counts):
        b.invalidate(f"privacy: the erasures counted {counts} events, not 100 each", *ERASE)
    if nulls != 100 * len(SUBJECTS):
        b.invalidate(f"privacy: {nulls} events without a payload after the erasures, not"
                     f" {100 * len(SUBJECTS)}", *ERASE)
    part.add("erase_subject_ms", median(times) or "INVALID", f"<= {TARGET_MS}", spread(times))
    part.add("erase_subject_target", TARGET_MS)
    part.add("erase_subject_events", median(counts) or "INVALID", "= 100")
    part.add("erase_subject_null_payloads", nulls, f"= {100 * len(SUBJECTS)}")
    part.details["history"] = (f"history        {n} events, one delivery and one attempt each,"
                               f" seeded in {seconds:.0f} s ({per_million:.0f} s per million);"
                               f" {indexed} subject index entries left")
    part.details["erasures"] = (f"erasures       {' '.join(times)} ms, {counts} events each"
                                f" ({', '.join(SUBJECTS)})")


def purged_so_far(b) -> int:
    """The events the server's purger logged as purged."""
    log_text = b.procs.log_of("purge-server").read_bytes()
    return sum(int(m) for m in PURGED.findall(log_text))


def purge(b, part: Part) -> None:
    n = purge_events()
    log(f"privacy: {n} finished events 40 days old, purged row by row by webhookd server"
        " (WEBHOOKD_RETENTION=23h); WAL from pg_walinspect")
    db = b.new_db("bench_purge")
    db.query("CREATE EXTENSION IF NOT EXISTS pg_walinspect")
    seed(db, n, 41, 40)
    # Autovacuum would reclaim the purged rows whenever it wakes, inside the window or
    # not: off, so the figure is the purge's own, and the VACUUM after it is measured apart.
    for table in PURGED_TABLES.split(", "):
        db.query(f"ALTER TABLE webhookd.{table} SET (autovacuum_enabled = false)")
    db.query("CHECKPOINT")
    lsn0 = wal.lsn(b.cluster, db.name)
    t0 = time.monotonic()
    # Under a day, retention deletes row by row from every day (docs/retention.md).
    proc, _ = b.start_webhookd("purge-server", "server", db, WEBHOOKD_RETENTION="23h")
    purged = 0
    while time.monotonic() - t0 < 300 and purged < n:
        time.sleep(0.1)
        if proc.poll() is not None:
            die(f"purge-server exited: {tail(b.procs.log_of('purge-server'), 5)}")
        purged = purged_so_far(b)
    lsn1 = wal.lsn(b.cluster, db.name)
    seconds = time.monotonic() - t0
    b.procs.stop(proc)
    left = db.query("SELECT (SELECT count(*) FROM webhookd.events) + (SELECT count(*) FROM"
                    " webhookd.deliveries) + (SELECT count(*) FROM webhookd.attempts) +"
                    " (SELECT count(*) FROM webhookd.event_subjects)")
    if purged != n or left != "0":
        b.invalidate(f"privacy: {purged} of {n} events purged in {seconds:.0f} s, {left} rows"
                     " left", *PURGE)
    purge_wal = wal.between(b.cluster, db.name, lsn0, lsn1)
    lsn2 = wal.lsn(b.cluster, db.name)
    db.query(f"VACUUM webhookd.{', webhookd.'.join(PURGED_TABLES.split(', '))}")
    lsn3 = wal.lsn(b.cluster, db.name)
    vacuum_bytes = int(db.query(f"SELECT pg_wal_lsn_diff('{lsn3}', '{lsn2}')"))
    db.drop()
    w = purge_wal
    heap, btree = w.heap(), w.of("Btree")
    part.add("purge_wal_per_event_bytes", f"{w.bytes / n:.1f}")
    part.details["purge"] = (
        f"purge          {n} events in {seconds:.1f} s (the server's start included): WAL"
        f" {w.bytes / n:.1f} B each ({w.fpi_bytes / n:.1f} B full-page images,"
        f" {w.checkpoints()} checkpoints), heap deletes {heap['DELETE'] / n:.2f}, other heap"
        f" {heap['other'] / n:.2f}, Btree {sum(btree.values()) / n:.2f} records each; the"
        f" VACUUM after it {vacuum_bytes / n:.1f} B each")


def measure(b) -> Part:
    part = Part()
    erasures(b, part)
    purge(b, part)
    return part
