// migrations/0038_history_days.sql carries a database of the release before it (one table
// per kind of history) into the history by day: every row lands in the partition of its
// day, keeps its id, and the work in the queue goes on.
#include <gtest/gtest.h>

#include <chrono>
#include <set>
#include <string>

#include "store/pg/migrator.h"
#include "tests/testing/pg_fixture.h"
#include "tests/testing/release_history.h"
#include "tests/testing/test_database.h"

namespace webhookd::testing::history_upgrade_pgtest {
namespace {

// The last commit before the history by day.
constexpr const char* kBeforeDaysCommit = "8b06360cf36a45f7006ae5bdc79b99b92a7417ed";

constexpr const char* kTables[] = {"events", "deliveries", "attempts", "dead_letters",
                                   "event_subjects"};

TEST(HistoryUpgradeTest, EveryRowLandsInItsDayAndTheQueueGoesOn) {
  TestDatabase db(false);
  MigrateAsAtCommit(kBeforeDaysCommit, db.url());
  ASSERT_FALSE(::testing::Test::HasFailure());
  // Four days of history, ten events a day, each with two deliveries: on the three earlier
  // days all finished (the first of each day dead-lettered), today's half still queued.
  db.Exec(
      "SET search_path = webhookd;"
      "INSERT INTO destinations (url, secret, event_types) VALUES"
      " ('https://a.example/hook', 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', '{}'),"
      " ('https://b.example/hook', 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', '{}');"
      "INSERT INTO events (type, payload, created_at, subjects)"
      " SELECT 'order.created', '{}', date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE"
      "        'UTC' - (3 - g / 10) * interval '1 day' + (g % 10) * interval '1 minute',"
      "        CASE WHEN g % 5 = 0 THEN ARRAY['user:' || g] END"
      "   FROM generate_series(0, 39) g ORDER BY g;"
      "INSERT INTO deliveries (event_id, destination_id, created_at)"
      " SELECT e.id, d.id, e.created_at FROM events e, destinations d ORDER BY e.id, d.id;"
      "WITH done AS (SELECT d.id FROM deliveries d JOIN events e ON e.id = d.event_id"
      "               WHERE e.created_at < date_trunc('day', now() AT TIME ZONE 'UTC')"
      "                     AT TIME ZONE 'UTC' OR d.id % 2 = 0),"
      " gone AS (DELETE FROM delivery_queue q USING done WHERE q.id = done.id)"
      " UPDATE deliveries d SET status = CASE WHEN d.event_id % 10 = 1 THEN 'dead_lettered'"
      "   ELSE 'succeeded' END, attempt_count = 1 FROM done WHERE d.id = done.id;"
      "UPDATE deliveries SET stopped_as = status WHERE status = 'dead_lettered';"
      "INSERT INTO attempts (delivery_id, attempt_number, started_at, duration_ms, outcome)"
      " SELECT id, 1, created_at, 5, CASE status WHEN 'succeeded' THEN 'success'"
      "   ELSE 'permanent' END FROM deliveries WHERE status <> 'pending';"
      "INSERT INTO dead_letters (delivery_id, event_id, destination_id, reason, attempt_count)"
      " SELECT id, event_id, destination_id, 'permanent_failure', 1 FROM deliveries"
      "  WHERE status = 'dead_lettered';");
  // Each table's rows as text, but for the kept flag the upgrade adds and the inbound
  // source's columns a later migration adds (NULL on every row here).
  auto rows_of = [&](const std::string& table) {
    return db.Scalar(
        "SELECT count(*) || ':' || md5(string_agg(r, ',' ORDER BY r)) FROM"
        " (SELECT (to_jsonb(t) - 'kept' - 'source_id' - 'source_provider' - 'dedupe_key')::text"
        " AS r FROM webhookd." +
        table + " t) x");
  };
  std::string before[5];
  for (int i = 0; i < 5; ++i) before[i] = rows_of(kTables[i]);
  const std::string queued =
      db.Scalar("SELECT string_agg(id::text, ',' ORDER BY id) FROM webhookd.delivery_queue");
  ASSERT_EQ(db.Scalar("SELECT count(*) FROM webhookd.delivery_queue"), "10");

  auto migrated = pg::Migrate(db.url(), pg::EmbeddedMigrations());
  ASSERT_TRUE(migrated) << migrated.error().message;

  // Every row as it was (its kept flag aside), in the partition of its event's day.
  for (int i = 0; i < 5; ++i) EXPECT_EQ(rows_of(kTables[i]), before[i]) << kTables[i];
  const std::string day_of = "'events_p' || to_char(e.created_at AT TIME ZONE 'UTC', 'YYYYMMDD')";
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM webhookd.events e WHERE tableoid::regclass::text <> " +
                      day_of),
            "0");
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM webhookd.deliveries d JOIN webhookd.events e"
                      " ON e.id = d.event_id WHERE replace(d.tableoid::regclass::text,"
                      " 'deliveries', 'events') <> " +
                      day_of),
            "0");
  EXPECT_EQ(db.Scalar("SELECT count(DISTINCT tableoid) FROM webhookd.events"), "4");
  EXPECT_EQ(db.Scalar("SELECT count(DISTINCT tableoid) FROM webhookd.attempts"), "4");
  EXPECT_EQ(db.Scalar("SELECT count(DISTINCT tableoid) FROM webhookd.dead_letters"), "4");
  EXPECT_EQ(db.Scalar("SELECT count(DISTINCT tableoid) FROM webhookd.event_subjects"), "4");
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM webhookd.history_days"), "11");  // 3 + today + 7

  // The queue goes on: the same ten queued, claimed and finished as before.
  EXPECT_EQ(db.Scalar("SELECT string_agg(id::text, ',' ORDER BY id) FROM webhookd.delivery_queue"),
            queued);
  pg::PgStore store(db.url(), pg::PgStore::Options{.api_connections = 2});
  auto claimed = store.ClaimDue(64, std::chrono::hours(1), 16);
  ASSERT_TRUE(claimed) << claimed.error().message;
  ASSERT_EQ(claimed->deliveries.size(), 10u);
  std::vector<AttemptRecord> records;
  for (const auto& c : claimed->deliveries) {
    records.push_back(RecordFor(c, DeliveryStatus::kSucceeded, 200, Outcome::kSuccess));
  }
  auto written = store.RecordOutcomes(records, ProtectionSettings{});
  ASSERT_TRUE(written) << written.error().message;
  EXPECT_EQ(written->applied.size(), 10u);
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM webhookd.delivery_rows WHERE status = 'succeeded'"),
            "73");
  // A new event carries today's day, after every id of the earlier release.
  auto event = store.InsertEvent(NewEvent{"order.created", "{}", std::nullopt}, std::nullopt);
  ASSERT_TRUE(event) << event.error().message;
  EXPECT_EQ(std::to_string(event->event.id >> 36),
            db.Scalar("SELECT floor(extract(epoch FROM now()) / 86400)::bigint"));
}

}  // namespace
}  // namespace webhookd::testing::history_upgrade_pgtest
