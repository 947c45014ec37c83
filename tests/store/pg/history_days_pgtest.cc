// The history by day (migrations/0038_history_days.sql) on a real PostgreSQL: every table
// of the history is partitioned with no DEFAULT partition and days ahead; new ids carry
// their day; a day goes whole, its unfinished events kept with everything about them and
// still delivered; a detach interrupted by the death of its connection is finished by the
// next round.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <optional>
#include <string>
#include <thread>

#include "store/pg/statements.h"
#include "tests/testing/pg_fixture.h"
#include "tests/testing/process.h"

namespace webhookd::history_days_pgtest {
namespace {

using namespace std::chrono_literals;
using testing::N;
using testing::RecordFor;

constexpr const char* kTables[] = {"events", "deliveries", "attempts", "dead_letters",
                                   "event_subjects"};

class HistoryDaysPgTest : public testing::PgTest {
 protected:
  int64_t Ingest(int64_t destination, std::vector<std::string> subjects = {}) {
    NewEvent e{"order.created", R"({"a":1})", destination};
    e.subjects = std::move(subjects);
    auto r = store_.InsertEvent(e, std::nullopt);
    EXPECT_TRUE(r) << r.error().message;
    return r ? r->event.id : 0;
  }
  std::string Count(const std::string& table, const std::string& where = "true") {
    return db_.Scalar("SELECT count(*) FROM " + table + " WHERE " + where);
  }
  std::string Today() { return db_.Scalar("SELECT to_char(now() AT TIME ZONE 'UTC', 'YYYYMMDD')"); }
  // A cutoff by which today has ended.
  static Timestamp AfterToday() { return SystemClock().Now() + 48h; }
};

TEST_F(HistoryDaysPgTest, EveryTableIsPartitionedByDayWithoutADefaultAndAWeekAhead) {
  for (const std::string table : kTables) {
    SCOPED_TRACE(table);
    // The table by kept, its days by range; neither has a DEFAULT partition, which would
    // forbid DETACH ... CONCURRENTLY.
    EXPECT_EQ(
        db_.Scalar("SELECT partstrat::text || ':' || partdefid::text FROM pg_partitioned_table"
                   " WHERE partrelid = 'webhookd." +
                   table + "'::regclass"),
        "l:0");
    EXPECT_EQ(
        db_.Scalar("SELECT partstrat::text || ':' || partdefid::text FROM pg_partitioned_table"
                   " WHERE partrelid = 'webhookd." +
                   table + "_days'::regclass"),
        "r:0");
    EXPECT_EQ(Count("pg_inherits", "inhparent = 'webhookd." + table + "_days'::regclass"),
              Count("webhookd.history_days"));
  }
  EXPECT_EQ(db_.Scalar("SELECT max(day) - (now() AT TIME ZONE 'UTC')::date"
                       " FROM webhookd.history_days"),
            "7");
  // Asking again adds nothing; asking further adds the days in between.
  EXPECT_EQ(*store_.AddHistoryDays(7), 0);
  EXPECT_EQ(*store_.AddHistoryDays(9), 2);
}

TEST_F(HistoryDaysPgTest, NewIdsCarryTheirDayAndADayHoldsItsEventsAndEverythingAboutThem) {
  const int64_t dst = CreateDestination(testing::TestDestination());
  const int64_t event = Ingest(dst, {"user:42"});
  const std::string day = db_.Scalar("SELECT floor(extract(epoch FROM now()) / 86400)::bigint");
  EXPECT_EQ(N(event >> 36), day);
  auto claimed = Claim(10);
  ASSERT_EQ(claimed.size(), 1u);
  EXPECT_EQ(N(claimed[0].delivery_id >> 36), day);
  auto dead = RecordFor(claimed[0], DeliveryStatus::kDeadLettered, 410, Outcome::kPermanent);
  dead.dead_letter_reason = DeadLetterReason::kPermanentFailure;
  Record({dead});
  const std::string today = Today();
  for (const std::string table : kTables) {
    EXPECT_EQ(db_.Scalar("SELECT string_agg(DISTINCT tableoid::regclass::text, ',') FROM " + table),
              table + "_p" + today)
        << table;
  }
}

TEST_F(HistoryDaysPgTest, ADayGoesWholeAndWhatIsUnfinishedIsKeptAndStillDelivered) {
  const int64_t dst = CreateDestination(testing::TestDestination());
  const int64_t delivered = Ingest(dst);
  const int64_t dead = Ingest(dst, {"user:1"});
  auto first = Claim(10);
  ASSERT_EQ(first.size(), 2u);
  std::vector<AttemptRecord> records;
  for (const auto& c : first) {
    if (c.event_id == dead) {
      auto r = RecordFor(c, DeliveryStatus::kDeadLettered, 410, Outcome::kPermanent);
      r.dead_letter_reason = DeadLetterReason::kPermanentFailure;
      records.push_back(r);
    } else {
      records.push_back(RecordFor(c, DeliveryStatus::kSucceeded, 200, Outcome::kSuccess));
    }
  }
  Record(records);
  const int64_t retrying = Ingest(dst, {"user:2"});
  auto second = Claim(10);
  ASSERT_EQ(second.size(), 1u);
  auto retry = RecordFor(second[0], DeliveryStatus::kPending, 503, Outcome::kRetryable);
  retry.wait = 1h;  // not due again during the test
  Record({retry});
  const int64_t pending = Ingest(dst);
  const std::string today = Today();

  auto dropped = store_.DropAgedDays(AfterToday(), 1);
  ASSERT_TRUE(dropped) << dropped.error().message;
  EXPECT_EQ(dropped->days, 1);
  EXPECT_EQ(dropped->kept_events, 2);
  // The day's tables are gone, and with them the finished events, whole.
  for (const std::string table : kTables) {
    EXPECT_EQ(db_.Scalar("SELECT to_regclass('webhookd." + table + "_p" + today + "') IS NULL"),
              "t")
        << table;
  }
  EXPECT_EQ(Count("webhookd.history_days", "day = (now() AT TIME ZONE 'UTC')::date"), "0");
  EXPECT_EQ(Count("events", "id IN (" + N(delivered) + "," + N(dead) + ")"), "0");
  EXPECT_EQ(Count("dead_letters"), "0");
  // The unfinished ones are kept with their deliveries, attempts and subjects.
  EXPECT_EQ(db_.Scalar("SELECT string_agg(id::text, ',' ORDER BY id) FROM events_kept"),
            N(retrying) + "," + N(pending));
  EXPECT_EQ(Count("deliveries_kept"), "2");
  EXPECT_EQ(Count("attempts_kept"), "1");
  EXPECT_EQ(Count("event_subjects_kept"), "1");
  EXPECT_EQ(Count("delivery_queue"), "2");
  // And go on as before: the pending one is claimed, its outcome kept with it.
  auto third = Claim(10);
  ASSERT_EQ(third.size(), 1u);
  EXPECT_EQ(third[0].event_id, pending);
  Record({RecordFor(third[0], DeliveryStatus::kSucceeded, 200, Outcome::kSuccess)});
  EXPECT_EQ(Count("attempts_kept"), "2");
  EXPECT_EQ(db_.Scalar("SELECT status FROM delivery_rows WHERE event_id = " + N(pending)),
            "succeeded");
  // Nothing else is due: a second round finds no day to drop.
  auto again = store_.DropAgedDays(SystemClock().Now(), 7);
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_EQ(again->days, 0);
}

// A list of events bounded in time names the ids of its days (first_event_id_at.sql,
// event_id_bound_before.sql), so that only their partitions are read; an event kept past
// its dropped day, whose id is below every day's, is still found.
TEST_F(HistoryDaysPgTest, AListBoundedInTimeReadsItsDaysAndFindsWhatWasKept) {
  const std::string today_lo =
      db_.Scalar("SELECT floor(extract(epoch FROM now()) / 86400)::bigint << 36");
  const std::string tomorrow_lo =
      db_.Scalar("SELECT (floor(extract(epoch FROM now()) / 86400)::bigint + 1) << 36");
  EXPECT_EQ(db_.Scalar("SELECT webhookd.first_event_id_at(now() + interval '1 day')"), tomorrow_lo);
  EXPECT_EQ(db_.Scalar("SELECT webhookd.event_id_bound_before(now())"), tomorrow_lo);
  // Before the first day kept, or no time: no bound.
  EXPECT_EQ(db_.Scalar("SELECT webhookd.first_event_id_at(now())"), "-9223372036854775808");
  EXPECT_EQ(db_.Scalar("SELECT webhookd.first_event_id_at(NULL)"), "-9223372036854775808");
  EXPECT_EQ(db_.Scalar("SELECT webhookd.event_id_bound_before(now() - interval '1 day')"),
            "9223372036854775807");
  EXPECT_EQ(db_.Scalar("SELECT webhookd.event_id_bound_before(NULL)"), "9223372036854775807");
  EXPECT_NE(today_lo, tomorrow_lo);

  // A list of tomorrow does not read today's partition: pruned before it runs.
  const auto plan = [&](const std::string& after, const std::string& before) {
    auto c = testing::TestDatabase::Connect(db_.url());
    pqxx::nontransaction tx(*c);
    std::string text;
    for (const auto& row : tx.exec("EXPLAIN (ANALYZE, COSTS OFF) SELECT id FROM events"
                                   " WHERE id >= webhookd.first_event_id_at(" +
                                   after +
                                   ")"
                                   "   AND id <= webhookd.event_id_bound_before(" +
                                   before + ")")) {
      text += row[0].c_str();
      text += '\n';
    }
    return text;
  };
  const std::string today = "events_p" + Today();
  const std::string tomorrow = plan("now() + interval '1 day'", "now() + interval '1 day'");
  EXPECT_EQ(tomorrow.find(today), std::string::npos) << tomorrow;
  EXPECT_NE(tomorrow.find("Subplans Removed"), std::string::npos) << tomorrow;
  EXPECT_NE(plan("now()", "now()").find(today), std::string::npos);

  const int64_t dst = CreateDestination(testing::TestDestination());
  const int64_t unfinished = Ingest(dst);
  EventFilter since_an_hour;
  since_an_hour.after = SystemClock().Now() - 1h;
  auto listed = store_.ListEvents(since_an_hour, Page{}, Scope::All());
  ASSERT_TRUE(listed) << listed.error().message;
  ASSERT_EQ(listed->items.size(), 1u);
  EventFilter from_tomorrow;
  from_tomorrow.after = SystemClock().Now() + 24h;
  EXPECT_TRUE(store_.ListEvents(from_tomorrow, Page{}, Scope::All())->items.empty());

  // Today goes; its unfinished event is kept, and found by the same list.
  auto dropped = store_.DropAgedDays(AfterToday(), 1);
  ASSERT_TRUE(dropped) << dropped.error().message;
  ASSERT_EQ(dropped->kept_events, 1);
  listed = store_.ListEvents(since_an_hour, Page{}, Scope::All());
  ASSERT_TRUE(listed) << listed.error().message;
  ASSERT_EQ(listed->items.size(), 1u);
  EXPECT_EQ(listed->items[0].id, unfinished);
}

// The detach of a day was under way (its first transaction committed, the partition
// pending) when the connection running it died, as when its process is killed: the next
// round finishes it (FINALIZE) and drops the day.
TEST_F(HistoryDaysPgTest, AnInterruptedDetachIsFinishedByTheNextRound) {
  const int64_t dst = CreateDestination(testing::TestDestination());
  Ingest(dst);
  Record({RecordFor(Claim(1).at(0), DeliveryStatus::kSucceeded, 200, Outcome::kSuccess)});
  const std::string today = Today();
  const std::string part = "events_p" + today;
  {
    auto carrier = testing::TestDatabase::Connect(db_.url());
    pqxx::work tx(*carrier);
    tx.exec_params(std::string(pg::sql::kCarryHistoryDay.sql),
                   db_.Scalar("SELECT (now() AT TIME ZONE 'UTC')::date::text"));
    tx.commit();
  }

  // A reader of the day holds the detach in its second phase, waiting for it.
  auto reader = testing::TestDatabase::Connect(db_.url());
  pqxx::work reading(*reader);
  reading.exec("SELECT count(*) FROM " + part);
  // The detach runs in a psql of its own, as in another process: its connection is the one
  // that dies.
  const char* bin = std::getenv("WEBHOOKD_TEST_PG_BIN");
  const std::string statement =
      "ALTER TABLE webhookd.events_days DETACH PARTITION webhookd." + part + " CONCURRENTLY";
  testing::Process detach(
      {std::string(bin != nullptr ? bin : "/usr/lib/postgresql/15/bin") + "/psql", "--no-psqlrc",
       "-v", "ON_ERROR_STOP=1", "-c", statement, db_.url()},
      {}, ::testing::TempDir() + "history_days_detach.log");
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  while (Count("pg_inherits",
               "inhrelid = 'webhookd." + part + "'::regclass AND inhdetachpending") != "1" &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(10ms);
  }
  ASSERT_EQ(
      Count("pg_inherits", "inhrelid = 'webhookd." + part + "'::regclass AND inhdetachpending"),
      "1")
      << testing::ReadFile(detach.log_path());
  db_.Exec("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query = '" + statement +
           "'");
  EXPECT_NE(detach.Wait(10s), std::optional<int>(0)) << testing::ReadFile(detach.log_path());
  reading.abort();
  ASSERT_EQ(
      Count("pg_inherits", "inhrelid = 'webhookd." + part + "'::regclass AND inhdetachpending"),
      "1");

  auto dropped = store_.DropAgedDays(SystemClock().Now(), 7);  // not aged: it was begun
  ASSERT_TRUE(dropped) << dropped.error().message;
  EXPECT_EQ(dropped->days, 1);
  EXPECT_EQ(db_.Scalar("SELECT to_regclass('webhookd." + part + "') IS NULL"), "t");
  EXPECT_EQ(Count("events"), "0");
}

TEST_F(HistoryDaysPgTest, OneProcessDropsAtATime) {
  auto other = testing::TestDatabase::Connect(db_.url());
  pqxx::nontransaction(*other).exec("SELECT pg_advisory_lock(7252039)");
  auto dropped = store_.DropAgedDays(AfterToday(), 1);
  ASSERT_TRUE(dropped) << dropped.error().message;
  EXPECT_EQ(dropped->days, 0);
  EXPECT_EQ(Count("webhookd.history_days", "day = (now() AT TIME ZONE 'UTC')::date"), "1");
}

TEST_F(HistoryDaysPgTest, TheStatusListsEachDaysPartitionsThenTheKept) {
  const int64_t dst = CreateDestination(testing::TestDestination());
  Ingest(dst);
  auto listed = store_.ListHistoryPartitions(24h * 30);
  ASSERT_TRUE(listed) << listed.error().message;
  ASSERT_EQ(listed->size(), (8u + 1u) * 5u);  // today, a week ahead, and kept
  EXPECT_EQ(listed->front().table, "events");
  EXPECT_EQ(listed->front().day, db_.Scalar("SELECT (now() AT TIME ZONE 'UTC')::date::text"));
  ASSERT_TRUE(listed->front().goes_at);
  EXPECT_EQ(FormatRfc3339(*listed->front().goes_at).substr(11), "00:00:00.000000Z");
  EXPECT_GT(listed->front().bytes, 0);
  EXPECT_FALSE(listed->back().day);
  EXPECT_EQ(listed->back().table, "event_subjects");
  EXPECT_FALSE(listed->back().goes_at);
  auto forever = store_.ListHistoryPartitions(Duration::zero());
  ASSERT_TRUE(forever);
  EXPECT_FALSE(forever->front().goes_at);
}

}  // namespace
}  // namespace webhookd::history_days_pgtest
