// Recoveries on a real PostgreSQL: a page replays its dead letters and moves the cursor in
// one transaction, two recoveries (or two processes) replay each dead letter once, a
// recovery stopped half-way resumes without a duplicate, and pages wait for the queue.
#include <gtest/gtest.h>

#include <chrono>
#include <latch>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "store/pg/pg_store.h"
#include "tests/testing/pg_fixture.h"

namespace webhookd::recoveries_pgtest {
namespace {

using namespace std::chrono_literals;
using testing::N;

class RecoveryPgTest : public testing::PgTest {
 protected:
  int64_t CreateDestination(std::optional<std::string> tenant = std::nullopt) {
    Destination d = testing::TestDestination();
    d.tenant_id = std::move(tenant);
    return PgTest::CreateDestination(d);
  }

  // Makes `n` dead-lettered deliveries of `destination_id` directly in SQL, fast, each
  // dead-lettered `age` ago.
  void InsertDeadLetters(int64_t destination_id, int n, const std::string& age = "1 minute") {
    const std::string dst = N(destination_id);
    db_.Exec(
        "CREATE TEMP TABLE new_events AS WITH e AS (INSERT INTO events (type, payload)"
        " SELECT 'bulk.test', '{}' FROM generate_series(1, " +
        N(n) +
        ") RETURNING id) SELECT id FROM e;"
        " CREATE TEMP TABLE new_deliveries AS WITH d AS (INSERT INTO deliveries"
        " (event_id, destination_id, status, attempt_count, cycle_attempts,"
        " last_status_code, last_error, stopped_as) SELECT id, " +
        dst +
        ", 'dead_lettered', 5, 5, 500, 'HTTP 500', 'dead_lettered' FROM new_events"
        " RETURNING id, event_id)"
        " SELECT * FROM d;"
        " INSERT INTO dead_letters (delivery_id, event_id, destination_id, reason,"
        " attempt_count, last_status_code, last_error, dead_lettered_at)"
        " SELECT id, event_id, " +
        dst + ", 'exhausted', 5, 500, 'HTTP 500', now() - interval '" + age +
        "' FROM new_deliveries ORDER BY id;"
        " DROP TABLE new_events; DROP TABLE new_deliveries;");
  }

  Recovery Request(int64_t destination_id, Timestamp since,
                   std::optional<Timestamp> until = std::nullopt) {
    auto r = store_.RequestRecovery(destination_id, since, until, Scope::All());
    EXPECT_TRUE(r) << r.error().message;
    return r ? *r : Recovery{};
  }

  static RecoveryRound Run(pg::PgStore& store, RecoveryPace pace, int max_pages) {
    auto r = store.RunRecoveries(pace, max_pages);
    EXPECT_TRUE(r) << r.error().message;
    return r ? *r : RecoveryRound{};
  }

  std::string Of(int64_t recovery, const std::string& column) {
    return db_.Scalar("SELECT " + column + " FROM recoveries WHERE id = " + N(recovery));
  }

  std::string Queued(int64_t destination_id) {
    return db_.Scalar("SELECT count(*) FROM delivery_queue WHERE destination_id = " +
                      N(destination_id));
  }

  static Timestamp HoursAgo(int h) { return SystemClock().Now() - std::chrono::hours(h); }
};

TEST_F(RecoveryPgTest, APageReplaysItsDeadLettersAndMovesTheCursorTogether) {
  const int64_t dst = CreateDestination();
  InsertDeadLetters(dst, 10);
  const Recovery rec = Request(dst, HoursAgo(1));
  EXPECT_EQ(rec.status, RecoveryStatus::kRunning);
  EXPECT_EQ(rec.replayed, 0);

  const RecoveryRound first = Run(store_, {.page = 3, .max_pending = 1000}, 1);
  EXPECT_EQ(first.replayed, 3);
  EXPECT_TRUE(first.more);
  EXPECT_EQ(Of(rec.id, "replayed"), "3");
  // The cursor is the third dead letter, and exactly the first three were replayed.
  EXPECT_EQ(Of(rec.id, "after_id"),
            db_.Scalar("SELECT id FROM dead_letters ORDER BY id OFFSET 2 LIMIT 1"));
  EXPECT_EQ(
      db_.Scalar(
          "SELECT string_agg(CASE WHEN replayed_at IS NULL THEN 'f' ELSE 't' END, '' ORDER BY id)"
          " FROM dead_letters"),
      "tttfffffff");
  EXPECT_EQ(Queued(dst), "3");
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM deliveries WHERE status = 'pending'"), "3");

  // A page that fails writes nothing: neither a replay nor the cursor.
  db_.Exec(
      "CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS"
      " $$BEGIN RAISE EXCEPTION 'refused'; END$$;"
      " CREATE TRIGGER refuse BEFORE UPDATE ON recoveries FOR EACH ROW EXECUTE FUNCTION refuse()");
  EXPECT_FALSE(store_.RunRecoveries({.page = 3, .max_pending = 1000}, 1));
  EXPECT_EQ(Of(rec.id, "replayed"), "3");
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM dead_letters WHERE replayed_at IS NOT NULL"), "3");
  EXPECT_EQ(Queued(dst), "3");
  db_.Exec("DROP TRIGGER refuse ON recoveries");

  const RecoveryRound rest = Run(store_, {.page = 3, .max_pending = 1000}, 100);
  EXPECT_EQ(rest.replayed, 7);
  EXPECT_EQ(rest.finished, 1);
  EXPECT_EQ(rest.running, 0);
  EXPECT_FALSE(rest.more);
  auto done = store_.GetRecovery(rec.id, Scope::All());
  ASSERT_TRUE(done) << done.error().message;
  EXPECT_EQ(done->status, RecoveryStatus::kDone);
  EXPECT_EQ(done->replayed, 10);
  EXPECT_TRUE(done->finished_at);
  EXPECT_EQ(Queued(dst), "10");
}

// A dead letter's id is drawn when it is written, and it is seen when its transaction
// commits: one still open while the first pass went by is behind the cursor. The second
// pass, from the window's start, replays it; only then is the recovery done.
TEST_F(RecoveryPgTest, ADeadLetterCommittedBehindTheCursorIsReplayedByTheSecondPass) {
  const int64_t dst = CreateDestination();
  auto late = testing::TestDatabase::Connect(db_.url());
  pqxx::work open(*late);
  open.exec("SET LOCAL search_path TO webhookd");
  open.exec(
      "WITH e AS (INSERT INTO events (type, payload) VALUES ('bulk.test', '{}') RETURNING id),"
      " d AS (INSERT INTO deliveries (event_id, destination_id, status, attempt_count,"
      "  cycle_attempts, last_status_code, last_error, stopped_as)"
      "  SELECT id, " +
      N(dst) +
      ", 'dead_lettered', 5, 5, 500, 'HTTP 500', 'dead_lettered' FROM e RETURNING id, event_id)"
      " INSERT INTO dead_letters (delivery_id, event_id, destination_id, reason, attempt_count,"
      "  last_status_code, last_error, dead_lettered_at)"
      " SELECT id, event_id, " +
      N(dst) + ", 'exhausted', 5, 500, 'HTTP 500', now() - interval '1 minute' FROM d");
  InsertDeadLetters(dst, 4);  // later ids, committed
  const Recovery rec = Request(dst, HoursAgo(1));

  // The first pass: one short page, the four; then the second pass starts from the start.
  const RecoveryRound first = Run(store_, {.page = 10, .max_pending = 1000}, 1);
  EXPECT_EQ(first.replayed, 4);
  EXPECT_EQ(first.finished, 0);
  EXPECT_EQ(Of(rec.id, "pass"), "2");
  EXPECT_EQ(Of(rec.id, "after_id"), "0");
  EXPECT_EQ(Of(rec.id, "status"), "running");

  open.commit();
  const RecoveryRound second = Run(store_, {.page = 10, .max_pending = 1000}, 1);
  EXPECT_EQ(second.replayed, 1);
  EXPECT_EQ(second.finished, 1);
  EXPECT_EQ(Of(rec.id, "status"), "done");
  EXPECT_EQ(Of(rec.id, "replayed"), "5");
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM dead_letters WHERE replayed_at IS NULL"), "0");
  EXPECT_EQ(Queued(dst), "5");
}

TEST_F(RecoveryPgTest, OnlyTheWindowsOpenDeadLettersOfTheDestinationAreReplayed) {
  const int64_t dst = CreateDestination();
  const int64_t other = CreateDestination();
  InsertDeadLetters(dst, 4, "3 hours");  // before the window
  InsertDeadLetters(dst, 5, "90 minutes");
  InsertDeadLetters(dst, 6, "10 minutes");  // after it
  InsertDeadLetters(other, 7, "90 minutes");
  // One in the window dismissed, one replayed already.
  db_.Exec(
      "UPDATE dead_letters SET dismissed_at = now() WHERE id = (SELECT min(id) FROM dead_letters"
      " WHERE dead_lettered_at > now() - interval '2 hours' AND destination_id = " +
      N(dst) + ")");
  db_.Exec(
      "UPDATE dead_letters SET replayed_at = now() WHERE id = (SELECT max(id) FROM dead_letters"
      " WHERE dead_lettered_at < now() - interval '1 hour' AND destination_id = " +
      N(dst) + ")");
  const Recovery rec = Request(dst, HoursAgo(2), HoursAgo(1));
  const RecoveryRound round = Run(store_, {.page = 2, .max_pending = 1000}, 100);
  EXPECT_EQ(round.replayed, 3);
  EXPECT_EQ(round.finished, 1);
  EXPECT_EQ(Of(rec.id, "replayed"), "3");
  EXPECT_EQ(Queued(dst), "3");
  EXPECT_EQ(Queued(other), "0");
}

TEST_F(RecoveryPgTest, TwoRecoveriesAndTwoProcessesReplayEachDeadLetterOnce) {
  const int64_t dst = CreateDestination();
  constexpr int kDeadLetters = 3000;
  InsertDeadLetters(dst, kDeadLetters);
  // Two recoveries of overlapping windows, each run by two processes (stores of their
  // own) at once.
  const Recovery a = Request(dst, HoursAgo(2));
  const Recovery b = Request(dst, HoursAgo(1));
  std::vector<std::unique_ptr<pg::PgStore>> processes;
  for (int i = 0; i < 2; ++i) {
    processes.push_back(std::make_unique<pg::PgStore>(
        db_.url(), pg::PgStore::Options{.api_connections = 2, .committers = 0}));
  }
  std::latch start(2);
  std::vector<std::thread> threads;
  for (auto& process : processes) {
    threads.emplace_back([&, store = process.get()] {
      start.arrive_and_wait();
      for (int round = 0; round < 1000; ++round) {
        auto r = store->RunRecoveries({.page = 50, .max_pending = 1000000}, 3);
        ASSERT_TRUE(r) << r.error().message;
        if (r->running == 0) return;
      }
      ADD_FAILURE() << "the recoveries never finished";
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(Of(a.id, "status"), "done");
  EXPECT_EQ(Of(b.id, "status"), "done");
  EXPECT_EQ(std::stoll(Of(a.id, "replayed")) + std::stoll(Of(b.id, "replayed")), kDeadLetters);
  EXPECT_EQ(Queued(dst), N(kDeadLetters));
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM dead_letters WHERE replayed_at IS NULL"), "0");
}

TEST_F(RecoveryPgTest, ARecoveryStoppedHalfWayResumesWithoutADuplicate) {
  const int64_t dst = CreateDestination();
  InsertDeadLetters(dst, 100);
  const Recovery rec = Request(dst, HoursAgo(1));
  {
    // A process that did two pages and was stopped.
    pg::PgStore first(db_.url(), pg::PgStore::Options{.api_connections = 1, .committers = 0});
    EXPECT_EQ(Run(first, {.page = 20, .max_pending = 1000}, 2).replayed, 40);
  }
  {
    // One that held the recovery and had replayed a dead letter of its page when it died:
    // the page goes with its transaction.
    pqxx::connection dying(db_.url());
    pqxx::work page(dying);
    page.exec("SELECT 1 FROM webhookd.recoveries WHERE id = " + N(rec.id) + " FOR UPDATE");
    page.exec(
        "UPDATE webhookd.dead_letters SET replayed_at = now() WHERE id = (SELECT min(id)"
        " FROM webhookd.dead_letters WHERE replayed_at IS NULL)");
  }
  EXPECT_EQ(Of(rec.id, "replayed"), "40");
  EXPECT_EQ(Of(rec.id, "after_id"),
            db_.Scalar("SELECT id FROM dead_letters ORDER BY id OFFSET 39 LIMIT 1"));
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM dead_letters WHERE replayed_at IS NOT NULL"), "40");

  pg::PgStore second(db_.url(), pg::PgStore::Options{.api_connections = 1, .committers = 0});
  const RecoveryRound rest = Run(second, {.page = 20, .max_pending = 1000}, 100);
  EXPECT_EQ(rest.replayed, 60);
  EXPECT_EQ(rest.finished, 1);
  EXPECT_EQ(Of(rec.id, "replayed"), "100");
  EXPECT_EQ(Queued(dst), "100");
  // Done is done: nothing is replayed again.
  EXPECT_EQ(Run(second, {.page = 20, .max_pending = 1000}, 100).replayed, 0);
}

TEST_F(RecoveryPgTest, ARecoveryHeldByAnotherProcessIsLeftToIt) {
  const int64_t dst = CreateDestination();
  InsertDeadLetters(dst, 5);
  const Recovery rec = Request(dst, HoursAgo(1));
  pqxx::connection other(db_.url());
  pqxx::work holding(other);
  holding.exec("SELECT 1 FROM webhookd.recoveries WHERE id = " + N(rec.id) + " FOR UPDATE");
  const RecoveryRound held = Run(store_, {.page = 2, .max_pending = 1000}, 10);
  EXPECT_EQ(held.replayed, 0);
  EXPECT_EQ(held.running, 1);
  EXPECT_FALSE(held.more);
  EXPECT_EQ(Queued(dst), "0");
  holding.abort();
  EXPECT_EQ(Run(store_, {.page = 2, .max_pending = 1000}, 10).replayed, 5);
}

TEST_F(RecoveryPgTest, PagesWaitWhileTheDestinationHasItsCapOfUnfinishedDeliveries) {
  const int64_t dst = CreateDestination();
  InsertDeadLetters(dst, 12);
  const Recovery rec = Request(dst, HoursAgo(1));
  // A page of 3, then one of the 2 that fit under 5, then nothing while 5 wait.
  RecoveryRound round = Run(store_, {.page = 3, .max_pending = 5}, 10);
  EXPECT_EQ(round.replayed, 5);
  EXPECT_EQ(round.running, 1);
  EXPECT_FALSE(round.more);
  EXPECT_EQ(Queued(dst), "5");
  EXPECT_EQ(Run(store_, {.page = 3, .max_pending = 5}, 10).replayed, 0);
  EXPECT_EQ(Of(rec.id, "status"), "running");

  // The destination delivers 4 of them: 4 more come.
  db_.Exec(
      "DELETE FROM delivery_queue WHERE id IN (SELECT id FROM delivery_queue"
      " ORDER BY id LIMIT 4)");
  EXPECT_EQ(Run(store_, {.page = 3, .max_pending = 5}, 10).replayed, 4);
  EXPECT_EQ(Queued(dst), "5");
  db_.Exec("DELETE FROM delivery_queue");
  round = Run(store_, {.page = 3, .max_pending = 5}, 10);
  EXPECT_EQ(round.replayed, 3);
  EXPECT_EQ(round.finished, 1);
  EXPECT_EQ(Of(rec.id, "replayed"), "12");
}

TEST_F(RecoveryPgTest, ARequestOutsideTheScopeOrTheRulesWritesNothing) {
  const int64_t acme = CreateDestination("acme");
  const int64_t globex = CreateDestination("globex");
  const int64_t untenanted = CreateDestination();
  auto own = store_.RequestRecovery(acme, HoursAgo(1), std::nullopt, Scope::Tenant("acme"));
  ASSERT_TRUE(own) << own.error().message;
  EXPECT_EQ(own->tenant_id, "acme");
  for (int64_t dst : {globex, untenanted, int64_t{999999}}) {
    auto r = store_.RequestRecovery(dst, HoursAgo(1), std::nullopt, Scope::Tenant("acme"));
    ASSERT_FALSE(r) << dst;
    EXPECT_EQ(r.error().kind, ErrorKind::kNotFound);
    EXPECT_EQ(r.error().message, "no destination with that id");
  }
  auto theirs = store_.GetRecovery(own->id, Scope::Tenant("globex"));
  ASSERT_FALSE(theirs);
  EXPECT_EQ(theirs.error().kind, ErrorKind::kNotFound);
  EXPECT_TRUE(store_.GetRecovery(own->id, Scope::All()));

  // A window that ends before it begins, or begins in the future.
  auto backwards = store_.RequestRecovery(acme, HoursAgo(1), HoursAgo(2), Scope::All());
  ASSERT_FALSE(backwards);
  EXPECT_EQ(backwards.error().kind, ErrorKind::kInvalid);
  auto future = store_.RequestRecovery(acme, SystemClock().Now() + 1h, std::nullopt, Scope::All());
  ASSERT_FALSE(future);
  EXPECT_EQ(future.error().kind, ErrorKind::kInvalid);
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM recoveries"), "1");

  // At most kMaxRunning of one destination at once.
  for (int i = 1; i < RecoveryStore::kMaxRunning; ++i) Request(acme, HoursAgo(1));
  auto too_many = store_.RequestRecovery(acme, HoursAgo(1), std::nullopt, Scope::All());
  ASSERT_FALSE(too_many);
  EXPECT_EQ(too_many.error().kind, ErrorKind::kTooMany);
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM recoveries"), N(RecoveryStore::kMaxRunning));
}

}  // namespace
}  // namespace webhookd::recoveries_pgtest
