// The row-by-row purge on a real PostgreSQL: under a retention shorter than a day, an old
// event whose deliveries all ended goes with its deliveries, attempts and dead letters;
// nothing pending, in flight or young is touched; batches are bounded; one process purges
// at a time. From a day on, only what was kept past its day is purged row by row (whole
// days go: history_days_pgtest).
#include <gtest/gtest.h>

#include <chrono>
#include <set>

#include "store/pg/locks.h"
#include "store/pg/statements.h"
#include "tests/testing/pg_fixture.h"

namespace webhookd::retention_pgtest {
namespace {

using namespace std::chrono_literals;
using testing::N;
using testing::RecordFor;

class RetentionPgTest : public testing::PgTest {
 protected:
  int64_t Ingest(int64_t destination) {
    auto r =
        store_.InsertEvent(NewEvent{"order.created", R"({"a":1})", destination},
                           std::optional<IdempotencyKey>(IdempotencyKey{"k" + N(++keys_), "h"}));
    EXPECT_TRUE(r) << r.error().message;
    return r ? r->event.id : 0;
  }
  // Works every due delivery once: succeeded, or dead-lettered for the event ids given.
  void Finish(const std::set<int64_t>& dead) {
    std::vector<AttemptRecord> records;
    for (const ClaimedDelivery& c : Claim(100)) {
      if (dead.contains(c.event_id)) {
        AttemptRecord r = RecordFor(c, DeliveryStatus::kDeadLettered, 404, Outcome::kPermanent);
        r.dead_letter_reason = DeadLetterReason::kPermanentFailure;
        records.push_back(r);
      } else {
        records.push_back(RecordFor(c, DeliveryStatus::kSucceeded, 200, Outcome::kSuccess));
      }
    }
    Record(records);
  }
  std::string Count(const std::string& table, const std::string& where = "true") {
    return db_.Scalar("SELECT count(*) FROM " + table + " WHERE " + where);
  }
  // An event and its idempotency key, written in one transaction, share created_at.
  void Age(int64_t event, const std::string& age) {
    db_.Exec("UPDATE events SET created_at = now() - interval '" + age +
             "' WHERE id = " + N(event));
    db_.Exec("UPDATE idempotency_keys SET created_at = now() - interval '" + age +
             "' WHERE event_id = " + N(event));
  }
  int keys_ = 0;
};

TEST_F(RetentionPgTest, AnOldFinishedEventGoesWithEverythingAndNothingElseDoes) {
  const int64_t dst = CreateDestination(testing::TestDestination());
  const int64_t delivered = Ingest(dst);
  const int64_t dead = Ingest(dst);
  Finish({dead});
  const int64_t young = Ingest(dst);
  Finish({});
  const int64_t pending = Ingest(dst);  // never worked
  const int64_t in_flight = Ingest(dst);
  ASSERT_EQ(Claim(1).size(), 1u);  // one of the two is now in flight, the other pending
  for (int64_t e : {delivered, dead, pending, in_flight}) Age(e, "2 days");
  ASSERT_EQ(Count("dead_letters"), "1");
  ASSERT_EQ(Count("attempts"), "3");

  auto purged = store_.PurgeExpired(1h, 1000);
  ASSERT_TRUE(purged) << purged.error().message;
  EXPECT_EQ(*purged, 2);
  EXPECT_EQ(Count("events", "id IN (" + N(delivered) + "," + N(dead) + ")"), "0");
  EXPECT_EQ(Count("deliveries", "event_id IN (" + N(delivered) + "," + N(dead) + ")"), "0");
  EXPECT_EQ(Count("dead_letters"), "0");
  EXPECT_EQ(Count("attempts"), "1");  // the young event's
  EXPECT_EQ(Count("idempotency_keys", "event_id IN (" + N(delivered) + "," + N(dead) + ")"), "0");
  // Young, pending and in flight stay, with their deliveries.
  for (int64_t e : {young, pending, in_flight}) {
    EXPECT_EQ(Count("events", "id = " + N(e)), "1") << e;
    EXPECT_EQ(Count("deliveries", "event_id = " + N(e)), "1") << e;
  }
  // Nothing more to do.
  EXPECT_EQ(*store_.PurgeExpired(24h, 1000), 0);
}

TEST_F(RetentionPgTest, APurgeTakesAtMostOneBatchAndSkipsWhileAnotherPurges) {
  const int64_t dst = CreateDestination(testing::TestDestination());
  for (int i = 0; i < 5; ++i) Ingest(dst);
  Finish({});
  db_.Exec("UPDATE events SET created_at = now() - interval '2 days'");

  // Another process holds the purge lock: this one does nothing.
  auto other = testing::TestDatabase::Connect(db_.url());
  pqxx::work holding(*other);
  holding.exec("SELECT pg_advisory_xact_lock(" + N(pg::kPurgeLock) + ")");
  EXPECT_EQ(*store_.PurgeExpired(1h, 2), 0);
  holding.abort();

  EXPECT_EQ(*store_.PurgeExpired(1h, 2), 2);
  EXPECT_EQ(Count("events"), "3");
  EXPECT_EQ(*store_.PurgeExpired(1h, 2), 2);
  EXPECT_EQ(*store_.PurgeExpired(1h, 2), 1);
  EXPECT_EQ(Count("events"), "0");
  EXPECT_EQ(Count("deliveries"), "0");
}

// A batch must cost the same however much is kept, so every row it reads must be reachable
// through an index. With sequential scans priced out (enable_seqscan = off), one still
// counted in the transaction's own table statistics (pg_stat_xact_user_tables) is a lookup
// with no index to take: before dead_letters_delivery, one whole scan of dead_letters per
// deleted delivery.
TEST_F(RetentionPgTest, EveryLookupOfABatchHasAnIndex) {
  const int64_t dst = CreateDestination(testing::TestDestination());
  // 2,000 young events and 200 old ones, each with a dead-lettered delivery, its attempt
  // and dead letter, and (the young ones) a live idempotency key.
  db_.Exec(R"(
    INSERT INTO events (type, payload, created_at)
    SELECT 't', '{}', now() - CASE WHEN g <= 200 THEN interval '2 days' ELSE interval '1 hour' END
      FROM generate_series(1, 2200) g ORDER BY g;
    INSERT INTO deliveries (event_id, destination_id, status, attempt_count, created_at)
    SELECT id, )" +
           N(dst) + R"(, 'dead_lettered', 1, created_at FROM events;
    INSERT INTO attempts (delivery_id, attempt_number, started_at, duration_ms, outcome)
    SELECT id, 1, created_at, 1, 'permanent' FROM delivery_rows;
    INSERT INTO dead_letters (delivery_id, event_id, destination_id, reason, attempt_count)
    SELECT id, event_id, destination_id, 'permanent_failure', 1 FROM delivery_rows;
    INSERT INTO idempotency_keys (key, request_hash, event_id, created_at)
    SELECT 'k' || id, 'h', id, created_at FROM events WHERE created_at > now() - interval '1 day';
    ANALYZE events; ANALYZE deliveries; ANALYZE attempts; ANALYZE dead_letters;
    ANALYZE idempotency_keys;)");

  auto conn = testing::TestDatabase::Connect(db_.url());
  pqxx::work tx(*conn);
  tx.exec("SET LOCAL enable_seqscan = off");
  const pqxx::result purged =
      tx.exec_params(std::string(pg::sql::kPurgeExpiredEvents.sql), int64_t{86'400'000'000}, 1000);
  EXPECT_EQ(purged[0][0].as<int64_t>(), 200);
  // Each table over its partitions (migrations/0038_history_days.sql): its days and kept.
  const pqxx::result scans = tx.exec(
      "SELECT regexp_replace(relname, '_(p[0-9]+|kept)$', ''), sum(seq_scan)"
      " FROM pg_stat_xact_user_tables WHERE schemaname = 'webhookd'"
      " AND relname ~ '^(events|deliveries|attempts|dead_letters)_(p[0-9]+|kept)$'"
      " OR relname = 'idempotency_keys' GROUP BY 1 ORDER BY 1");
  ASSERT_EQ(scans.size(), 5u);
  for (const auto& row : scans) {
    EXPECT_EQ(row[1].as<int64_t>(), 0) << "whole-table scans of " << row[0].c_str();
  }
  EXPECT_EQ(tx.exec("SELECT count(*) FROM dead_letters")[0][0].as<int64_t>(), 2000);
  EXPECT_EQ(tx.exec("SELECT count(*) FROM idempotency_keys")[0][0].as<int64_t>(), 2000);
}

// From a day on, the purge reads the kept partitions alone: an old finished event still in
// its day waits for the day to go whole; one kept past its day goes row by row.
TEST_F(RetentionPgTest, FromADayOnOnlyKeptEventsArePurgedRowByRow) {
  const int64_t dst = CreateDestination(testing::TestDestination());
  const int64_t in_day = Ingest(dst);
  const int64_t kept = Ingest(dst);
  Finish({kept});
  Age(in_day, "40 days");
  Age(kept, "40 days");
  for (const std::string table : {"events", "event_subjects"}) {
    db_.Exec("UPDATE " + table + " SET kept = true WHERE " +
             (table == "events" ? "id" : "event_id") + " = " + N(kept));
  }
  db_.Exec("UPDATE deliveries SET kept = true WHERE event_id = " + N(kept));
  db_.Exec(
      "UPDATE attempts SET kept = true WHERE delivery_id IN"
      " (SELECT id FROM deliveries WHERE event_id = " +
      N(kept) + ")");
  db_.Exec("UPDATE dead_letters SET kept = true WHERE event_id = " + N(kept));
  ASSERT_EQ(Count("dead_letters_kept"), "1");

  EXPECT_EQ(*store_.PurgeExpired(24h * 30, 1000), 1);
  EXPECT_EQ(Count("events", "id = " + N(kept)), "0");
  EXPECT_EQ(Count("deliveries_kept"), "0");
  EXPECT_EQ(Count("attempts_kept"), "0");
  EXPECT_EQ(Count("dead_letters_kept"), "0");
  EXPECT_EQ(Count("events", "id = " + N(in_day)), "1");
  EXPECT_EQ(Count("attempts"), "1");
}

TEST_F(RetentionPgTest, IdempotencyKeysAreForgottenAfterADay) {
  const int64_t dst = CreateDestination(testing::TestDestination());
  Ingest(dst);
  Ingest(dst);
  db_.Exec("UPDATE idempotency_keys SET created_at = now() - interval '25 hours' WHERE key = 'k1'");
  ASSERT_TRUE(store_.PurgeExpired(24h, 1000));
  EXPECT_EQ(db_.Scalar("SELECT string_agg(key, ',') FROM idempotency_keys"), "k2");
}

}  // namespace
}  // namespace webhookd::retention_pgtest
