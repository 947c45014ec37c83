#pragma once

#include <cstdint>

namespace webhookd::pg {

// PostgreSQL advisory lock keys, each webhookd's alone.
// `webhookd migrate`: one migrator at a time (a session lock).
inline constexpr int64_t kMigrateLock = 7252010;
// Every claim, so the per-destination caps hold across workers (a transaction lock taken
// inside the claim function of store/pg/schema/claim_due.sql, which holds the value
// itself; tests/store/pg/claim_pgtest.cc checks they agree).
inline constexpr int64_t kClaimLock = 7252011;

// Retention: one purging process at a time (a transaction lock, tried, never waited for).
inline constexpr int64_t kPurgeLock = 7252012;

// Dropping days of the history (PgRetentionStore::DropAgedDays): one process at a time,
// across the detaches, which run outside any transaction (a session lock, tried).
inline constexpr int64_t kHistoryDropLock = 7252039;
// Erasure beside retention: DropAgedDays holds it (a session lock, waited for) from the
// carrying of a day to its drop, while the day's rows are out of an erasure's reach and
// what of them is kept is copied back; each erasure batch tries it shared in its
// transaction and, refused, waits for the next round (PgErasureStore::RunErasures).
inline constexpr int64_t kHistoryMoveLock = 7252040;
// Adding days of the history: one caller at a time (a transaction lock taken inside
// store/pg/schema/add_history_days.sql, which holds the value itself).
inline constexpr int64_t kHistoryAddLock = 7252038;
// How many days ahead the migrator creates the history's partitions (the purger's
// default too: Purger::Options::days_ahead).
inline constexpr int kHistoryDaysAhead = 7;

// Destination creation: one at a time per tenant, so WEBHOOKD_MAX_DESTINATIONS_PER_TENANT
// holds under concurrent creations (a transaction lock keyed by this and the tenant's
// hash, taken by sql/lock_tenant_destinations.sql, which holds the value itself).
inline constexpr int64_t kDestinationQuotaLock = 7252016;

// The channel workers LISTEN on; ingest, replay and release NOTIFY it.
inline constexpr const char* kWakeupChannel = "webhookd_wakeup";

}  // namespace webhookd::pg
