"""The event catalog at ingest: a type's JSON Schema, and filtered destinations."""

import json

from harness import http
from harness.figures import Part
from harness.load import warm_and_load
from harness.log import log
from harness.stats import field, median, ratio, spread

HELP = """\
  ingest_schema_ratio     as ingest_events_per_s, a payload of 20 properties (428 bytes)
                          whose type has a JSON Schema of 20 properties in the catalog
                          (bench/sql/catalog.sql: every JSON type, required, enums, a
                          pattern, a date-time format, bounds, a nested object, an array
                          of objects), over the same load with the type there without a
                          schema, run just before it: the median of three such pairs.
                          INVALID when a request failed (a 422 included) or a payload
                          that breaks the schema was not refused
  ingest_filters_ratio    as ingest_tenants_per_s, the same payload to tenant "bench" with
                          100 destinations each with a filter (bench/sql/filters.sql: on
                          $.amount, $.currency, starts with over $.items[*].sku, one
                          like_regex), ten of them true, over the same tenant with 100
                          unfiltered destinations of other types and ten of order.*, run
                          just before it: the median of three such pairs. Every event
                          must make ten deliveries on both sides (counted in SQL after
                          each run); INVALID otherwise, or when a request failed
"""

ONLY = """\
--only catalog measures ingest_schema_ratio and ingest_filters_ratio alone (a minute and a
half with --quick), for trying them out; the report has those figures only."""

# The payload of both cases: 20 properties that bench/sql/catalog.sql's schema accepts and
# ten of bench/sql/filters.sql's filters deliver.
ORDER = ('{"id":"ord_4242","amount":125.5,"currency":"EUR","status":"paid","customer":"cus_0042",'
         '"email":"ana@shop.example","created_at":"2025-11-25T12:00:00Z","quantity":3,"paid":true,'
         '"test":false,"tax":20.9,"discount":0,"channel":"web","country":"FR","note":"","version":2,'
         '"priority":1,"shipping":{"method":"std","cost":4.9,"zip":"69001"},"items":[{"sku":"sku_1",'
         '"qty":2,"price":50},{"sku":"sku_2","qty":1,"price":25.5}],"tags":["new"]}')
# Breaks the schema four ways (pattern, minimum, enum, minItems).
BAD = ('{"id":"4242","amount":-1,"currency":"XXX","created_at":"2025-11-25T12:00:00Z",'
       '"items":[]}')


def ingest(b, name: str, port: int, *args) -> tuple:
    """A warm-up second, then the closed-loop ingest of ORDER; (line, no request failed)."""
    line = warm_and_load(b, name, port, "--payload", ORDER, *args)
    if field(line, "failed") == "0":
        return line, True
    b.note(f"{name}: failed requests: {line or 'no result'}")
    return line, False


def schema(b, with_schema: str) -> tuple:
    """The ingest of ingest_events_per_s (one destination) with order.created in the
    catalog, with bench/sql/catalog.sql's schema when WITH_SCHEMA is "true"; (rate, valid)."""
    db = b.new_db("bench_schema")
    db.sql("catalog", schema=with_schema, payload=ORDER)
    proc, port = b.start_webhookd(f"server-schema-{with_schema}", "server", db)
    b.create_destination(port, f"http://127.0.0.1:{b.sink.port}/schema")
    valid = True
    if with_schema == "true":
        body = json.dumps({"type": "order.created", "payload": json.loads(BAD)})
        code, answer, _ = http.request(port, "/v1/events", "POST", body,
                                       {**b.auth(), "Content-Type": "application/json"})
        if code != 422:
            b.note(f"schema: a payload that breaks the schema answered {code:03d}, not 422:"
                   f" {answer[:300].decode(errors='replace')}")
            valid = False
    line, ok = ingest(b, f"ingest-schema-{with_schema}", port)
    b.procs.stop(proc)
    db.drop()
    return field(line, "per_s"), valid and ok


def filters(b, filtered: str) -> tuple:
    """The ingest of tenant "bench" with bench/sql/filters.sql's destinations (filtered
    when FILTERED is "true"); (rate, valid): no request failed and every event made ten
    deliveries."""
    db = b.new_db("bench_filters")
    db.sql("filters", filtered=filtered, sink=f"127.0.0.1:{b.sink.port}", secret=b.secret)
    name = f"ingest-filters-{filtered}"
    proc, port = b.start_webhookd(f"server-filters-{filtered}", "server", db)
    line, valid = ingest(b, name, port, "--tenant", "bench")
    b.procs.stop(proc)
    events, wrong, least, most = (db.sql("deliveries_per_event", n=10).split("|") + [""] * 4)[:4]
    log(f"{name}: {events} events, {wrong} without exactly 10 deliveries ({least}-{most})")
    if events == "0" or wrong != "0":
        b.note(f"{name}: {wrong} of {events} events did not make exactly 10 deliveries (from"
               f" {least} to {most})")
        valid = False
    db.drop()
    return field(line, "per_s"), valid


def pairs(b, case, off: str, on: str) -> tuple:
    """Three pairs of CASE, OFF then ON; (off rates, on rates, ratios, all valid)."""
    offs, ons, ratios, valid = [], [], [], True
    for _ in (1, 2, 3):
        for side, rates in ((off, offs), (on, ons)):
            rate, ok = case(b, side)
            rates.append(rate)
            valid = valid and ok
        ratios.append(ratio(ons[-1] or 0, offs[-1] or 0))
    return offs, ons, ratios, valid


def measure(b) -> Part:
    log("catalog: ingest of a 20-property payload without and with its type's schema, three"
        " pairs; then 10 of 110 unfiltered destinations and 10 of 100 filtered ones, three pairs")
    plain, schemed, schema_ratios, schema_ok = pairs(b, schema, "false", "true")
    open_, filtered, filter_ratios, filters_ok = pairs(b, filters, "false", "true")
    schema_ratio, filters_ratio = median(schema_ratios), median(filter_ratios)
    part = Part()
    part.add("ingest_schema_ratio", schema_ratio if schema_ok else "INVALID", ">= 0.85",
             spread(schema_ratios))
    part.add("ingest_filters_ratio", filters_ratio if filters_ok else "INVALID", ">= 0.80",
             spread(filter_ratios))
    part.details["schema"] = (f"schema         {len(ORDER)}-byte payload of 20 properties, three"
                              f" pairs: no schema {' '.join(plain)} /s, schema {' '.join(schemed)}"
                              f" /s (ratios {' '.join(schema_ratios)}, median {schema_ratio})")
    part.details["filters"] = (f"filters        tenant bench, 10 deliveries an event, three pairs:"
                               f" 10 of 110 unfiltered {' '.join(open_)} /s, 10 of 100 filtered"
                               f" {' '.join(filtered)} /s (ratios {' '.join(filter_ratios)},"
                               f" median {filters_ratio})")
    return part
