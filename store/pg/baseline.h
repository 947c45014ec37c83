#pragma once

#include <array>
#include <string_view>

namespace webhookd::pg {

// migrations/0034_baseline.sql: the tables, indexes and data that migrations 0001-0034 of
// the releases before it built, in one file (their functions live in store/pg/schema/).
inline constexpr std::string_view kBaselineVersion = "0034_baseline";

// The versions it replaces, as schema_migrations of a database those releases migrated
// lists them. A database holding every one is at 0034: the baseline is recorded for it,
// not run. One holding only some is part-way, and is sent to the previous release first.
inline constexpr std::array<std::string_view, 33> kReplacedVersions = {
    "0001_init",
    "0002_claim_by_destination",
    "0003_claim_function",
    "0004_schema_webhookd",
    "0005_secret_rotation",
    "0006_tenants",
    "0008_purge_indexes",
    "0009_publish",
    "0010_event_type_keys",
    "0011_protection",
    "0012_claim_pending_destinations",
    "0013_delivery_counts",
    "0014_due_destinations",
    "0015_list_indexes",
    "0016_producer_hardening",
    "0017_destination_quota",
    "0018_ordered_delivery",
    "0019_event_catalog",
    "0020_egress",
    "0021_trace_context",
    "0022_publish_trace_context",
    "0023_claim_returns_trace_context",
    "0024_claim_token_while_in_flight",
    "0025_claim_locks_its_share",
    "0026_queue_indexes_keep_one_entry_per_row",
    "0027_event_type_keys_in_plpgsql",
    "0028_delivery_rows",
    "0029_fifo_keys_take_turns",
    "0030_claim_reads_by_index_scans",
    "0031_parents_by_construction",
    "0032_purge_reads_only_old_events",
    "0033_filters_linear",
    "0034_plain_values_that_read_as_sealed",
};

}  // namespace webhookd::pg
