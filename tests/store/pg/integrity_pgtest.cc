// What the foreign keys of deliveries, attempts and dead letters held, now held by the
// statements that write and delete those rows (migration 0031, before the baseline): no row
// outlives its parent, and writing a row never reads its parent table, however that table's
// statistics look.
#include <gtest/gtest.h>

#include <chrono>
#include <future>

#include "store/pg/statements.h"
#include "tests/testing/pg_fixture.h"
#include "tests/testing/wait.h"

namespace webhookd::integrity_pgtest {
namespace {

using namespace std::chrono_literals;
using testing::N;
using testing::RecordFor;

class IntegrityPgTest : public testing::PgTest {
 protected:
  // Rows whose parent is gone; the keys would have made each of these impossible.
  std::string Orphans() {
    return db_.Scalar(R"(
      SELECT (SELECT count(*) FROM delivery_rows d
               WHERE NOT EXISTS (SELECT 1 FROM events e WHERE e.id = d.event_id)
                  OR NOT EXISTS (SELECT 1 FROM destinations t WHERE t.id = d.destination_id))
           + (SELECT count(*) FROM attempts a
               WHERE NOT EXISTS (SELECT 1 FROM delivery_rows d WHERE d.id = a.delivery_id))
           + (SELECT count(*) FROM dead_letters x
               WHERE NOT EXISTS (SELECT 1 FROM delivery_rows d WHERE d.id = x.delivery_id)))");
  }
};

// A parent table analyzed while empty (retention emptied it, autovacuum analyzed it) made
// PostgreSQL plan a foreign key's lookup as a read of the whole table, kept for the
// connection's life: one sequential scan of events per delivery written, of deliveries
// per attempt. The writes now read no parent at all.
TEST_F(IntegrityPgTest, WritingRowsReadsNoParentTableAnalyzedWhileEmpty) {
  CreateDestination(testing::TestDestination());
  auto conn = testing::TestDatabase::Connect(db_.url());
  // What retention and autovacuum leave: the tables vacuumed and analyzed while empty.
  pqxx::nontransaction(*conn).exec("VACUUM ANALYZE events, deliveries");
  pqxx::work tx(*conn);
  // Over the table's partitions (migrations/0038_history_days.sql): its days and its kept.
  const auto scans = [&](const std::string& table) {
    return tx
        .exec(
            "SELECT coalesce(sum(seq_scan), 0) FROM pg_stat_xact_user_tables"
            " WHERE schemaname = 'webhookd' AND relname ~ '^" +
            table + "_(p[0-9]+|kept)$'")[0][0]
        .as<int64_t>();
  };

  const int64_t events_before = scans("events");
  tx.exec("SELECT webhookd.publish('order.created', '{}') FROM generate_series(1, 50)");
  EXPECT_EQ(scans("events") - events_before, 0) << "whole-table scans of events";

  const std::string ids =
      tx.exec("SELECT string_agg(id::text, ',') FROM delivery_rows")[0][0].c_str();
  const int64_t deliveries_before = scans("deliveries");
  tx.exec(
      "INSERT INTO attempts (delivery_id, attempt_number, started_at, duration_ms, outcome) "
      "SELECT id, 1, now(), 1, 'success' FROM unnest('{" +
      ids + "}'::bigint[]) id");
  EXPECT_EQ(scans("deliveries") - deliveries_before, 0) << "whole-table scans of deliveries";
  EXPECT_EQ(tx.exec("SELECT count(*) FROM attempts")[0][0].as<int64_t>(), 50);
}

// A replay that lands while a purge is deleting its event: the purge's snapshot saw the
// delivery dead-lettered, but the replay holds its event (FOR SHARE, replay_dead_letter.sql,
// so that an erasure cannot pass it), and the purge skips an event it cannot lock. The
// delivery, its event, its attempt, its dead letter and the event's idempotency key all
// stay, and the delivery is sent again. (With the foreign key, the purge's whole batch
// failed and was tried again later; without either, the event went and the delivery was
// left pointing at nothing.)
TEST_F(IntegrityPgTest, AReplayDuringAPurgeKeepsTheEventAndEverythingUnderIt) {
  const int64_t dst = CreateDestination(testing::TestDestination());
  auto ingested = store_.InsertEvent(NewEvent{"order.created", R"({"a":1})", dst},
                                     std::optional<IdempotencyKey>(IdempotencyKey{"k1", "h"}));
  ASSERT_TRUE(ingested) << ingested.error().message;
  const int64_t event = ingested->event.id;
  // A second event, finished, goes in the same batch: the purge still does its work.
  const int64_t other = store_.InsertEvent(NewEvent{"order.created", "{}", dst}, {})->event.id;
  std::vector<AttemptRecord> records;
  for (const ClaimedDelivery& c : Claim(10)) {
    if (c.event_id == event) {
      AttemptRecord r = RecordFor(c, DeliveryStatus::kDeadLettered, 410, Outcome::kPermanent);
      r.dead_letter_reason = DeadLetterReason::kPermanentFailure;
      records.push_back(r);
    } else {
      records.push_back(RecordFor(c, DeliveryStatus::kSucceeded, 200, Outcome::kSuccess));
    }
  }
  ASSERT_EQ(Record(records).size(), 2u);
  // Younger than a day, so that only the purge of events forgets the key; in one
  // transaction, as a key is found by its event's created_at.
  db_.Exec(
      "UPDATE events SET created_at = now() - interval '2 hours'; "
      "UPDATE idempotency_keys SET created_at = now() - interval '2 hours'");
  // The other, and the operational event the dead letter made (which nothing subscribes to).
  const int64_t finished = std::stoll(db_.Scalar("SELECT count(*) FROM events")) - 1;
  const int64_t dead_letter = std::stoll(db_.Scalar("SELECT id FROM dead_letters"));

  auto replaying = testing::TestDatabase::Connect(db_.url());
  pqxx::work replay(*replaying);
  ASSERT_EQ(replay
                .exec_params(std::string(pg::sql::kReplayDeadLetter.sql), dead_letter,
                             std::optional<std::string>())
                .size(),
            1u);
  auto purge = std::async(std::launch::async, [&] { return store_.PurgeExpired(1h, 1000); });
  // The purge does not wait for the replay: it skips the event the replay holds. (Not an
  // ASSERT: the replay must end whatever happens, or a purge waiting for it would wait for
  // ever.)
  EXPECT_EQ(purge.wait_for(20s), std::future_status::ready);
  replay.commit();

  auto purged = purge.get();
  ASSERT_TRUE(purged) << purged.error().message;
  EXPECT_EQ(*purged, finished);
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM events WHERE id = " + N(other)), "0");
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM events WHERE id = " + N(event)), "1");
  EXPECT_EQ(db_.Scalar("SELECT status FROM delivery_rows WHERE event_id = " + N(event)), "pending");
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM attempts"), "1");
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM dead_letters"), "1");
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM idempotency_keys WHERE event_id = " + N(event)), "1");
  EXPECT_EQ(Orphans(), "0");

  // Once it has finished again, the next purge takes it whole.
  const std::vector<ClaimedDelivery> again = Claim(10);
  ASSERT_EQ(again.size(), 1u);
  Record({RecordFor(again[0], DeliveryStatus::kSucceeded, 200, Outcome::kSuccess)});
  db_.Exec(  // operational events made since
      "UPDATE events SET created_at = now() - interval '2 hours' "
      "WHERE created_at > now() - interval '1 hour'");
  EXPECT_GE(*store_.PurgeExpired(1h, 1000), 1);
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM events"), "0");
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM idempotency_keys"), "0");
  EXPECT_EQ(Orphans(), "0");
}

}  // namespace
}  // namespace webhookd::integrity_pgtest
