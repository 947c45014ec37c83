// Dead letters and replay on a real PostgreSQL: a replay restarts the schedule and keeps
// the history, happens at most once per dead letter, and bulk replays share the work.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <latch>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "store/pg/pg_store.h"
#include "tests/testing/pg_fixture.h"

namespace webhookd::dead_letters_pgtest {
namespace {

using namespace std::chrono_literals;
using testing::Ids;
using testing::N;
using testing::RecordFor;

class DeadLetterPgTest : public testing::PgTest {
 protected:
  int64_t CreateDestination() { return PgTest::CreateDestination(testing::TestDestination()); }

  // An event of type `reason` for `destination_id` alone; returns its delivery id.
  int64_t Ingest(int64_t destination_id, const std::string& reason = "exhausted") {
    auto r = store_.InsertEvent(NewEvent{reason, R"({"a":1})", destination_id}, std::nullopt);
    EXPECT_TRUE(r) << r.error().message;
    if (!r || r->event.deliveries.size() != 1) return 0;
    return r->event.deliveries[0].id;
  }

  // Works every due delivery as a worker would, each attempt failing, until all have
  // used `attempts` attempts of this cycle and are dead-lettered with the reason named by
  // their event type.
  void FailUntilDeadLettered(int attempts = 5) {
    for (int rounds = 0; rounds < 100; ++rounds) {
      auto claimed = store_.ClaimDue(1000, 1h, 1000);
      ASSERT_TRUE(claimed) << claimed.error().message;
      if (claimed->deliveries.empty()) return;
      std::vector<AttemptRecord> records;
      for (const ClaimedDelivery& c : claimed->deliveries) {
        AttemptRecord r = RecordFor(c, DeliveryStatus::kPending, 500, Outcome::kRetryable);
        r.error = "HTTP 500";
        if (c.cycle_attempts + 1 >= attempts) {
          r.next_status = DeliveryStatus::kDeadLettered;
          r.dead_letter_reason = ParseDeadLetterReason(c.event_type);
        } else {
          r.wait = 0s;  // due at once
        }
        records.push_back(r);
      }
      auto applied = store_.RecordOutcomes(records, {});
      ASSERT_TRUE(applied) << applied.error().message;
      ASSERT_EQ(applied->applied.size(), records.size());
    }
    FAIL() << "deliveries never ran out";
  }

  int64_t DeadLetterOf(int64_t delivery_id) {
    const std::string id =
        db_.Scalar("SELECT max(id) FROM dead_letters WHERE delivery_id = " + N(delivery_id));
    return id.empty() ? 0 : std::stoll(id);
  }

  std::string Column(int64_t delivery_id, const std::string& column) {
    return db_.Scalar("SELECT " + column + " FROM " + testing::kDeliveryState +
                      " dr WHERE id = " + N(delivery_id));
  }

  // Makes `n` dead-lettered deliveries of `destination_id` directly in SQL, fast.
  void InsertDeadLetters(int64_t destination_id, int n) {
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
        " attempt_count, last_status_code, last_error)"
        " SELECT id, event_id, " +
        dst + ", 'exhausted', 5, 500, 'HTTP 500' FROM new_deliveries;");
  }
};

TEST_F(DeadLetterPgTest, AReplayRestartsTheCycleAndKeepsTheAttempts) {
  const int64_t dst = CreateDestination();
  const int64_t delivery = Ingest(dst);
  FailUntilDeadLettered(5);
  ASSERT_EQ(Column(delivery, "status"), "dead_lettered");
  const int64_t dl = DeadLetterOf(delivery);
  ASSERT_GT(dl, 0);
  EXPECT_EQ(db_.Scalar("SELECT attempt_count FROM dead_letters WHERE id = " + N(dl)), "5");
  const std::string attempts_sql =
      "SELECT string_agg(t::text, ';' ORDER BY attempt_number) FROM attempts t";
  const std::string attempts_before = db_.Scalar(attempts_sql);
  ASSERT_FALSE(attempts_before.empty());

  auto replayed = store_.ReplayDeadLetter(dl, Scope::All());
  ASSERT_TRUE(replayed) << replayed.error().message;
  EXPECT_EQ(*replayed, delivery);
  EXPECT_EQ(Column(delivery, "status"), "pending");
  EXPECT_EQ(Column(delivery, "cycle_attempts"), "0");
  EXPECT_EQ(Column(delivery, "attempt_count"), "5");
  EXPECT_EQ(Column(delivery, "claim_token IS NULL AND lease_until IS NULL"), "t");
  EXPECT_NEAR(std::stod(Column(delivery, "extract(epoch FROM next_attempt_at - now())")), 0, 5);
  EXPECT_EQ(db_.Scalar(attempts_sql), attempts_before);
  EXPECT_EQ(db_.Scalar("SELECT replayed_at IS NOT NULL FROM dead_letters WHERE id = " + N(dl)),
            "t");
  auto listed = store_.ListDeadLetters({}, Page{}, Scope::All());
  ASSERT_TRUE(listed);
  ASSERT_EQ(listed->items.size(), 1u);
  EXPECT_TRUE(listed->items[0].replayed_at);

  auto twice = store_.ReplayDeadLetter(dl, Scope::All());
  ASSERT_FALSE(twice);
  EXPECT_EQ(twice.error().kind, ErrorKind::kConflict);

  // The next attempt is the 6th, the first of a fresh cycle.
  auto claimed = store_.ClaimDue(10, 1h, 16);
  ASSERT_TRUE(claimed);
  ASSERT_EQ(claimed->deliveries.size(), 1u);
  EXPECT_EQ(claimed->deliveries[0].attempt_count, 5);
  EXPECT_EQ(claimed->deliveries[0].cycle_attempts, 0);
  // And the whole cycle again ends in a second dead letter, replayable in turn.
  ASSERT_TRUE(store_.ReleaseClaims(std::vector<ReleasedClaim>{
      {claimed->deliveries[0].delivery_id, claimed->deliveries[0].claim_token}}));
  FailUntilDeadLettered(5);
  auto attempts = store_.ListAttempts(delivery, AttemptPage{}, Scope::All());
  ASSERT_TRUE(attempts);
  ASSERT_EQ(attempts->items.size(), 10u);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(attempts->items[i].attempt_number, i + 1);
  EXPECT_FALSE(attempts->next_before_id);
  // Replays make attempts without end: they come in pages, each after the last one's.
  auto page = store_.ListAttempts(delivery, AttemptPage{.limit = 4, .after = 0}, Scope::All());
  ASSERT_TRUE(page);
  ASSERT_EQ(page->items.size(), 4u);
  EXPECT_EQ(page->next_before_id, 4);
  page = store_.ListAttempts(delivery, AttemptPage{.limit = 4, .after = 8}, Scope::All());
  ASSERT_TRUE(page);
  ASSERT_EQ(page->items.size(), 2u);
  EXPECT_EQ(page->items[0].attempt_number, 9);
  EXPECT_FALSE(page->next_before_id);
  const int64_t second = DeadLetterOf(delivery);
  ASSERT_NE(second, dl);
  EXPECT_EQ(db_.Scalar("SELECT attempt_count FROM dead_letters WHERE id = " + N(second)), "10");
  auto again = store_.ReplayDeadLetter(second, Scope::All());
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_EQ(*again, delivery);
  auto first_again = store_.ReplayDeadLetter(dl, Scope::All());
  ASSERT_FALSE(first_again);
  EXPECT_EQ(first_again.error().kind, ErrorKind::kConflict);
}

TEST_F(DeadLetterPgTest, TwoConcurrentReplaysOfOneDeadLetterReplayItOnce) {
  const int64_t dst = CreateDestination();
  std::vector<int64_t> deliveries;
  for (int i = 0; i < 10; ++i) deliveries.push_back(Ingest(dst));
  FailUntilDeadLettered(1);
  for (int64_t delivery : deliveries) {
    const int64_t dl = DeadLetterOf(delivery);
    ASSERT_GT(dl, 0);
    std::latch start(2);
    Result<int64_t> results[2];
    std::vector<std::thread> threads;
    for (int t = 0; t < 2; ++t) {
      threads.emplace_back([&, t] {
        start.arrive_and_wait();
        results[t] = store_.ReplayDeadLetter(dl, Scope::All());
      });
    }
    for (auto& t : threads) t.join();
    ASSERT_NE(results[0].has_value(), results[1].has_value()) << "dead letter " << dl;
    const auto& won = results[0] ? results[0] : results[1];
    const auto& lost = results[0] ? results[1] : results[0];
    EXPECT_EQ(*won, delivery);
    EXPECT_EQ(lost.error().kind, ErrorKind::kConflict);
    EXPECT_EQ(Column(delivery, "status"), "pending");
  }
}

TEST_F(DeadLetterPgTest, ADeadLetterOfADeletedDestinationIsAConflict) {
  const int64_t dst = CreateDestination();
  const int64_t delivery = Ingest(dst);
  FailUntilDeadLettered(1);
  const int64_t dl = DeadLetterOf(delivery);
  ASSERT_TRUE(store_.DeleteDestination(dst, Scope::All()));

  auto r = store_.ReplayDeadLetter(dl, Scope::All());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, ErrorKind::kConflict);
  EXPECT_EQ(db_.Scalar("SELECT replayed_at IS NULL FROM dead_letters WHERE id = " + N(dl)), "t");
  EXPECT_EQ(Column(delivery, "status"), "dead_lettered");
  // Nor does a bulk replay take it.
  auto bulk = store_.ReplayDeadLetters({}, Scope::All(), std::nullopt);
  ASSERT_TRUE(bulk);
  EXPECT_EQ(bulk->replayed, 0);
  EXPECT_EQ(Column(delivery, "status"), "dead_lettered");
}

TEST_F(DeadLetterPgTest, AnUnknownDeadLetterIsNotFound) {
  auto r = store_.ReplayDeadLetter(12345, Scope::All());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, ErrorKind::kNotFound);
}

// Five dead letters of A (three exhausted, two permanent), four of B, one of C (deleted),
// an hour apart in id order; A's first already replayed.
struct Letter {
  int64_t id;
  int64_t destination_id;
  DeadLetterReason reason;
  Timestamp at;
};

struct Fixture {
  int64_t a = 0, b = 0, c = 0;
  std::vector<Letter> letters;  // oldest first
  int64_t replayed = 0;
};

struct FilterCase {
  std::string name;
  std::function<DeadLetterFilter(const Fixture&)> make;
};

class DeadLetterFilterTest : public DeadLetterPgTest,
                             public ::testing::WithParamInterface<FilterCase> {
 protected:
  void SetUp() override {
    f_.a = CreateDestination();
    f_.b = CreateDestination();
    f_.c = CreateDestination();
    for (const char* reason :
         {"exhausted", "permanent_failure", "exhausted", "permanent_failure", "exhausted"}) {
      Ingest(f_.a, reason);
    }
    for (const char* reason :
         {"permanent_failure", "exhausted", "exhausted", "permanent_failure"}) {
      Ingest(f_.b, reason);
    }
    Ingest(f_.c, "exhausted");
    FailUntilDeadLettered(2);
    db_.Exec(
        "UPDATE dead_letters SET dead_lettered_at = '2025-01-01T00:00:00Z'::timestamptz"
        " + id * interval '1 hour'");
    auto all = store_.ListDeadLetters({}, Page{1000, std::nullopt}, Scope::All());
    ASSERT_TRUE(all);
    ASSERT_EQ(all->items.size(), 10u);
    for (auto it = all->items.rbegin(); it != all->items.rend(); ++it) {
      f_.letters.push_back({it->id, it->destination_id, it->reason, it->dead_lettered_at});
    }
    for (const Letter& l : f_.letters) {
      if (l.destination_id == f_.a && f_.replayed == 0) f_.replayed = l.id;
    }
    ASSERT_TRUE(store_.ReplayDeadLetter(f_.replayed, Scope::All()));
    ASSERT_TRUE(store_.DeleteDestination(f_.c, Scope::All()));
  }

  static bool Matches(const DeadLetterFilter& filter, const Letter& l) {
    return (!filter.destination_id || *filter.destination_id == l.destination_id) &&
           (!filter.reason || *filter.reason == l.reason) &&
           (!filter.since || l.at >= *filter.since) && (!filter.until || l.at < *filter.until);
  }

  Fixture f_;
};

TEST_P(DeadLetterFilterTest, ListingPagesNewestFirstThroughTheMatches) {
  const DeadLetterFilter filter = GetParam().make(f_);
  std::vector<int64_t> expected;
  for (const Letter& l : f_.letters) {
    if (Matches(filter, l)) expected.push_back(l.id);
  }
  std::reverse(expected.begin(), expected.end());
  ASSERT_FALSE(expected.empty());

  std::vector<int64_t> listed;
  std::optional<int64_t> cursor;
  for (int pages = 0; pages < 20; ++pages) {
    auto page = store_.ListDeadLetters(filter, Page{2, cursor}, Scope::All());
    ASSERT_TRUE(page) << page.error().message;
    ASSERT_LE(page->items.size(), 2u);
    for (const DeadLetter& d : page->items) {
      listed.push_back(d.id);
      EXPECT_TRUE(filter.destination_id.value_or(d.destination_id) == d.destination_id);
    }
    cursor = page->next_before_id;
    if (!cursor) break;
    EXPECT_EQ(*cursor, page->items.back().id);
  }
  EXPECT_EQ(listed, expected);
}

TEST_P(DeadLetterFilterTest, BulkReplayTakesExactlyTheMatchingUnreplayedOnes) {
  const DeadLetterFilter filter = GetParam().make(f_);
  std::set<int64_t> expected;
  for (const Letter& l : f_.letters) {
    if (Matches(filter, l) && l.id != f_.replayed && l.destination_id != f_.c) {
      expected.insert(l.id);
    }
  }
  ASSERT_FALSE(expected.empty());
  ASSERT_LT(expected.size(), 8u);  // the filter leaves some out

  auto n = store_.ReplayDeadLetters(filter, Scope::All(), std::nullopt);
  ASSERT_TRUE(n) << n.error().message;
  EXPECT_EQ(n->replayed, static_cast<int64_t>(expected.size()));

  auto replayed = Ids(db_.Scalar(
      "SELECT string_agg(id::text, ',' ORDER BY id) FROM dead_letters WHERE replayed_at IS "
      "NOT NULL"));
  std::set<int64_t> want = expected;
  want.insert(f_.replayed);
  EXPECT_EQ(std::set<int64_t>(replayed.begin(), replayed.end()), want);
  auto pending = Ids(db_.Scalar(
      "SELECT string_agg(x.id::text, ',' ORDER BY x.id) FROM dead_letters x JOIN deliveries d"
      " ON d.id = x.delivery_id WHERE d.status = 'pending' AND d.cycle_attempts = 0"));
  EXPECT_EQ(std::set<int64_t>(pending.begin(), pending.end()), want);

  // Nothing is left for the same filter.
  auto again = store_.ReplayDeadLetters(filter, Scope::All(), std::nullopt);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->replayed, 0);
}

DeadLetterFilter ByDestination(const Fixture& f) {
  DeadLetterFilter filter;
  filter.destination_id = f.b;
  return filter;
}

DeadLetterFilter ByReason(const Fixture&) {
  DeadLetterFilter filter;
  filter.reason = DeadLetterReason::kPermanentFailure;
  return filter;
}

DeadLetterFilter Since(const Fixture& f) {
  DeadLetterFilter filter;
  filter.since = f.letters[5].at;  // inclusive
  return filter;
}

DeadLetterFilter Until(const Fixture& f) {
  DeadLetterFilter filter;
  filter.until = f.letters[4].at;  // exclusive
  return filter;
}

DeadLetterFilter Everything(const Fixture& f) {
  DeadLetterFilter filter;
  filter.destination_id = f.a;
  filter.reason = DeadLetterReason::kExhausted;
  filter.since = f.letters[1].at;
  filter.until = f.letters[9].at;
  return filter;
}

INSTANTIATE_TEST_SUITE_P(EachFilter, DeadLetterFilterTest,
                         ::testing::Values(FilterCase{"Destination", ByDestination},
                                           FilterCase{"Reason", ByReason},
                                           FilterCase{"Since", Since}, FilterCase{"Until", Until},
                                           FilterCase{"AllTogether", Everything}),
                         [](const auto& info) { return info.param.name; });

TEST_F(DeadLetterPgTest, TwoConcurrentBulkReplaysNeverReplayOneDeadLetterTwice) {
  const int64_t dst = CreateDestination();
  constexpr int kLetters = 12000;
  InsertDeadLetters(dst, kLetters);
  // Every replay of a dead letter, as it happens.
  db_.Exec(
      "CREATE TABLE replay_log (dead_letter_id bigint NOT NULL);"
      " CREATE FUNCTION log_replay() RETURNS trigger LANGUAGE plpgsql AS"
      " $$ BEGIN INSERT INTO replay_log VALUES (NEW.id); RETURN NEW; END $$;"
      " CREATE TRIGGER log_replay AFTER UPDATE OF replayed_at ON dead_letters FOR EACH ROW"
      " EXECUTE FUNCTION log_replay();");

  std::latch start(2);
  Result<DeadLetterStore::BulkReplay> counts[2];
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&, t] {
      start.arrive_and_wait();
      counts[t] = store_.ReplayDeadLetters({}, Scope::All(), std::nullopt);
    });
  }
  for (auto& t : threads) t.join();
  ASSERT_TRUE(counts[0]) << counts[0].error().message;
  ASSERT_TRUE(counts[1]) << counts[1].error().message;
  EXPECT_EQ(counts[0]->replayed + counts[1]->replayed, kLetters);
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM replay_log"), N(kLetters));
  EXPECT_EQ(db_.Scalar("SELECT count(DISTINCT dead_letter_id) FROM replay_log"), N(kLetters));
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM dead_letters WHERE replayed_at IS NULL"), "0");
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM " + testing::kDeliveryState +
                       " dr WHERE status = 'pending'"),
            N(kLetters));
}

// A bound per call: at most `max`, then `more`; the next call goes on where it stopped.
TEST_F(DeadLetterPgTest, ABoundedBulkReplayStopsAtItsBoundAndGoesOnWhenAskedAgain) {
  const int64_t dst = CreateDestination();
  InsertDeadLetters(dst, 12000);
  auto first = store_.ReplayDeadLetters({}, Scope::All(), 10000);
  ASSERT_TRUE(first) << first.error().message;
  EXPECT_EQ(first->replayed, 10000);
  EXPECT_TRUE(first->more);
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM dead_letters WHERE replayed_at IS NULL"), "2000");
  auto second = store_.ReplayDeadLetters({}, Scope::All(), 10000);
  ASSERT_TRUE(second);
  EXPECT_EQ(second->replayed, 2000);
  EXPECT_FALSE(second->more);
  auto none = store_.ReplayDeadLetters({}, Scope::All(), 10000);
  ASSERT_TRUE(none);
  EXPECT_EQ(none->replayed, 0);
  EXPECT_FALSE(none->more);
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM " + testing::kDeliveryState +
                       " dr WHERE status = 'pending'"),
            "12000");
}

TEST_F(DeadLetterPgTest, ABulkReplayOfAHundredThousandIsQuick) {
  const int64_t dst = CreateDestination();
  constexpr int kLetters = 100000;
  InsertDeadLetters(dst, kLetters);
  ASSERT_EQ(db_.Scalar("SELECT count(*) FROM dead_letters WHERE replayed_at IS NULL"), N(kLetters));

  const auto start = std::chrono::steady_clock::now();
  auto n = store_.ReplayDeadLetters({}, Scope::All(), std::nullopt);
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(n) << n.error().message;
  EXPECT_EQ(n->replayed, kLetters);
  // A guard against a replay that rescans what it replayed (minutes at this size), not a
  // speed figure: a shared two-core machine under the suite's load has taken 50 s here,
  // against 10-20 s alone. The bench measures the speed.
  EXPECT_LT(took, 120s) << std::chrono::duration_cast<std::chrono::milliseconds>(took).count()
                        << " ms";
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM " + testing::kDeliveryState +
                       " dr WHERE status = 'pending'"
                       " AND cycle_attempts = 0 AND attempt_count = 5"
                       " AND next_attempt_at IS NOT NULL"),
            N(kLetters));
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM dead_letters WHERE replayed_at IS NULL"), "0");
}

}  // namespace
}  // namespace webhookd::dead_letters_pgtest
