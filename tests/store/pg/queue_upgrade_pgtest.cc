// migrations/0035_delivery_queue.sql moves the work of a database of the release before it
// (0.3: the queue inside deliveries) into the queue: nothing pending, retrying or in
// flight is lost, and nothing is sent twice because of the move.
#include <gtest/gtest.h>

#include <pqxx/pqxx>
#include <set>
#include <string>
#include <vector>

#include "store/pg/migrator.h"
#include "tests/testing/pg_fixture.h"
#include "tests/testing/release_history.h"
#include "tests/testing/test_database.h"

namespace webhookd::testing::queue_upgrade_pgtest {
namespace {

// The release before the queue: its baseline and schema files made the database.
constexpr const char* kBeforeQueueCommit = "90ec6b6b3d6fcccda42989483a5697573d5edd03";

TEST(QueueUpgradeTest, PendingRetryingAndInFlightWorkCarriesOverAndGoesOnce) {
  TestDatabase db(false);
  MigrateAsAtCommit(kBeforeQueueCommit, db.url());
  ASSERT_FALSE(::testing::Test::HasFailure());
  // Five deliveries as the earlier release left them: due now, retrying in an hour, in
  // flight with a live lease (its worker is sending it), in flight with a lease run out
  // (its worker is gone), and succeeded.
  db.Exec(
      "SET search_path = webhookd;"
      "INSERT INTO destinations (url, secret, event_types) VALUES"
      " ('https://a.example/hook', 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', '{}');"
      "SELECT publish('order.created', '{\"n\": ' || g || '}') FROM generate_series(1, 5) g;"
      "UPDATE deliveries SET attempt_count = 2, cycle_attempts = 2, last_status_code = 503,"
      " next_attempt_at = now() + interval '1 hour' WHERE id = 2;"
      "UPDATE deliveries SET status = 'in_flight', claim_token = 77,"
      " lease_until = now() + interval '1 hour' WHERE id = 3;"
      "UPDATE deliveries SET status = 'in_flight', claim_token = 78,"
      " lease_until = now() - interval '1 second' WHERE id = 4;"
      "UPDATE deliveries SET status = 'succeeded', attempt_count = 1, next_attempt_at = NULL"
      " WHERE id = 5;");

  auto migrated = pg::Migrate(db.url(), pg::EmbeddedMigrations());
  ASSERT_TRUE(migrated) << migrated.error().message;
  EXPECT_EQ(db.Scalar("SELECT string_agg(id || ':' || status || ':' || attempt_count || ':' ||"
                      " coalesce(claim_token::text, '-') || ':' ||"
                      " (next_attempt_at > now() + interval '50 minutes'), ',' ORDER BY id) FROM " +
                      kDeliveryState + " d WHERE id <= 4"),
            "1:pending:0:-:false,2:pending:2:-:true,3:in_flight:0:77:false,"
            "4:in_flight:0:78:false");
  EXPECT_EQ(db.Scalar("SELECT status || ':' || (next_attempt_at IS NULL) FROM " + kDeliveryState +
                      " d WHERE id = 5"),
            "succeeded:true");
  EXPECT_EQ(db.Scalar("SELECT string_agg(id::text, ',' ORDER BY id) FROM webhookd.delivery_queue"),
            "1,2,3,4");

  pg::PgStore store(db.url(), pg::PgStore::Options{.api_connections = 2});
  // Due now: only the pending one. The retry waits for its time, the two in flight for
  // their claims.
  auto claimed = store.ClaimDue(64, std::chrono::hours(1), 16);
  ASSERT_TRUE(claimed) << claimed.error().message;
  std::set<int64_t> sent;
  for (const auto& c : claimed->deliveries) sent.insert(c.delivery_id);
  EXPECT_EQ(sent, (std::set<int64_t>{1}));
  // The gone worker's lease has run out: its delivery is claimed again, once.
  auto requeued = store.RequeueExpiredLeases();
  ASSERT_TRUE(requeued) << requeued.error().message;
  EXPECT_EQ(*requeued, 1);
  auto again = store.ClaimDue(64, std::chrono::hours(1), 16);
  ASSERT_TRUE(again) << again.error().message;
  ASSERT_EQ(again->deliveries.size(), 1u);
  EXPECT_EQ(again->deliveries[0].delivery_id, 4);
  // The live worker's outcome, under the token it claimed with before the upgrade, is
  // written once; the same record again changes nothing.
  ClaimedDelivery live;
  live.delivery_id = 3;
  live.claim_token = 77;
  live.destination_id = 1;
  live.event_id = 3;
  live.attempt_count = 0;
  const std::vector<AttemptRecord> record = {
      RecordFor(live, DeliveryStatus::kSucceeded, 200, Outcome::kSuccess)};
  for (int i = 0; i < 2; ++i) {
    auto applied = store.RecordOutcomes(record, ProtectionSettings{});
    ASSERT_TRUE(applied) << applied.error().message;
    EXPECT_EQ(applied->applied, (i == 0 ? std::vector<int64_t>{3} : std::vector<int64_t>{}));
  }
  EXPECT_EQ(
      db.Scalar("SELECT status || ':' || attempt_count FROM webhookd.deliveries WHERE id = 3"),
      "succeeded:1");
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM webhookd.attempts WHERE delivery_id = 3"), "1");
  // The retry keeps its time and its count: claimed when due, as its third attempt.
  db.Exec("UPDATE webhookd.delivery_queue SET next_attempt_at = now() WHERE id = 2");
  auto retry = store.ClaimDue(64, std::chrono::hours(1), 16);
  ASSERT_TRUE(retry) << retry.error().message;
  ASSERT_EQ(retry->deliveries.size(), 1u);
  EXPECT_EQ(retry->deliveries[0].delivery_id, 2);
  EXPECT_EQ(retry->deliveries[0].attempt_count, 2);
}

}  // namespace
}  // namespace webhookd::testing::queue_upgrade_pgtest
