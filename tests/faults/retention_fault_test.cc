// Retention by day under a crash (docs/retention.md): `webhookd server` is killed with
// SIGKILL while it detaches an aged day (held in the detach's second phase by a reader of
// the day) and its backend ends as in a restart, which PostgreSQL leaves as a pending
// detach; the next server's first round finishes it (DETACH ... FINALIZE) and drops the
// day, and what was unfinished in it is kept.
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <string>

#include "tests/testing/test_database.h"
#include "tests/testing/wait.h"
#include "tests/testing/webhookd_process.h"

namespace webhookd::testing::retention_fault_test {
namespace {

using namespace std::chrono_literals;

constexpr const char* kTables[] = {"events", "deliveries", "attempts", "dead_letters",
                                   "event_subjects"};

// The day three days ago, with its five partitions attached as a retention round attaches
// a day ahead, and two events in it: one delivered, one whose delivery is still queued.
std::string MakeAgedDay(TestDatabase& db) {
  const std::string day = db.Scalar("SELECT (now() AT TIME ZONE 'UTC')::date - 3");
  const std::string lo =
      db.Scalar("SELECT ('" + day + "'::date - date '1970-01-01')::bigint << 36");
  const std::string hi =
      db.Scalar("SELECT ('" + day + "'::date + 1 - date '1970-01-01')::bigint << 36");
  const std::string suffix = "_p" + db.Scalar("SELECT to_char('" + day + "'::date, 'YYYYMMDD')");
  std::string sql;
  for (const std::string t : kTables) {
    sql += "CREATE TABLE " + t + suffix + " (LIKE " + t +
           " INCLUDING DEFAULTS INCLUDING CONSTRAINTS); ALTER TABLE " + t +
           "_days ATTACH PARTITION " + t + suffix + " FOR VALUES FROM (" + lo + ") TO (" + hi +
           ");";
  }
  sql +=
      "INSERT INTO history_days (day, event_from, event_to, delivery_from, delivery_to)"
      " VALUES ('" +
      day + "', " + lo + ", " + hi + ", " + lo + ", " + hi + ");";
  sql +=
      "INSERT INTO destinations (url, secret, event_types) VALUES"
      " ('https://example.com/hook', 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', '{}');";
  sql += "INSERT INTO events (id, type, payload, created_at) VALUES (" + lo +
         " + 1, 'order.created', '{}', '" + day + "'), (" + lo + " + 2, 'order.created', '{}', '" +
         day + "');";
  sql +=
      "INSERT INTO deliveries (id, event_id, destination_id, status, created_at)"
      " SELECT e.id, e.id, (SELECT min(id) FROM destinations), 'pending', e.created_at"
      " FROM events e;";
  sql += "DELETE FROM delivery_queue WHERE id = " + lo + " + 1;";
  sql += "UPDATE deliveries SET status = 'succeeded', attempt_count = 1 WHERE id = " + lo + " + 1;";
  db.Exec(sql);
  return suffix;
}

TEST(RetentionFaultTest, ADetachCutShortBySigkillIsFinishedByTheNextServer) {
  TestDatabase db;
  const std::string suffix = MakeAgedDay(db);
  const std::string events_day = "events" + suffix;
  const std::string pending =
      "SELECT count(*) FROM pg_inherits WHERE inhrelid = to_regclass('webhookd." + events_day +
      "') AND inhdetachpending";

  // A reader of the day: the detach's second phase waits for it.
  auto reader = TestDatabase::Connect(db.url());
  pqxx::work reading(*reader);
  reading.exec("SELECT count(*) FROM " + events_day);
  {
    WebhookdProcess server(db.url(), "server", {{"WEBHOOKD_RETENTION", "1d"}});
    ASSERT_TRUE(WaitUntil([&] { return db.Scalar(pending) == "1"; }, 30s))
        << ReadFile(server.log_path());
    server.process().Signal(SIGKILL);
    server.process().Wait(10s);
  }
  // A backend waiting on a lock does not notice that its client died: PostgreSQL ends it
  // on a restart (or, with client_connection_check_interval set, soon after). Ended here,
  // before the reader lets the detach go on, as a restart would.
  db.Exec(
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
      " WHERE query LIKE 'ALTER TABLE webhookd.%DETACH PARTITION%' AND pid <> pg_backend_pid()");
  ASSERT_TRUE(WaitUntil(
      [&] {
        return db.Scalar(
                   "SELECT count(*) FROM pg_stat_activity"
                   " WHERE query LIKE 'ALTER TABLE webhookd.%DETACH PARTITION%'"
                   " AND pid <> pg_backend_pid()") == "0";
      },
      10s));
  reading.abort();
  // PostgreSQL keeps the half-done detach.
  EXPECT_EQ(db.Scalar(pending), "1");
  EXPECT_EQ(db.Scalar("SELECT detaching_since IS NOT NULL FROM history_days"
                      " WHERE day = (now() AT TIME ZONE 'UTC')::date - 3"),
            "t");

  WebhookdProcess next(db.url(), "server", {{"WEBHOOKD_RETENTION", "1d"}});
  EXPECT_TRUE(WaitUntil(
      [&] {
        return db.Scalar(
                   "SELECT count(*) FROM history_days"
                   " WHERE day = (now() AT TIME ZONE 'UTC')::date - 3") == "0";
      },
      30s))
      << ReadFile(next.log_path());
  for (const std::string t : kTables) {
    EXPECT_EQ(db.Scalar("SELECT to_regclass('webhookd." + t + suffix + "') IS NULL"), "t") << t;
  }
  // The delivered event went with its day; the unfinished one is kept, with its queue row.
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM events"), "1");
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM events_kept"), "1");
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM deliveries_kept"), "1");
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM delivery_queue"), "1");
}

}  // namespace
}  // namespace webhookd::testing::retention_fault_test
