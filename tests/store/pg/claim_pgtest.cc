// The worker's side of the store on a real PostgreSQL: claims are exclusive, leased,
// capped per destination and fenced by their token; outcomes are written with their
// attempt.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <latch>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "store/pg/locks.h"
#include "store/pg/pg_pool.h"
#include "store/pg/pg_store.h"
#include "tests/testing/pg_fixture.h"

namespace webhookd::claim_pgtest {
namespace {

using namespace std::chrono_literals;
using testing::N;
using testing::RecordFor;

class ClaimPgTest : public testing::PgTest {
 protected:
  int64_t CreateDestination(std::optional<int> max_in_flight = std::nullopt,
                            std::vector<std::string> event_types = {}) {
    Destination d = testing::TestDestination(std::move(event_types), max_in_flight);
    d.headers = {{"X-Tenant", "acme"}};
    return PgTest::CreateDestination(d);
  }

  // `n` events, each fanned out to every matching destination.
  void Ingest(int n, const std::string& type = "order.created") {
    for (int i = 0; i < n; ++i) {
      auto r =
          store_.InsertEvent(NewEvent{type, R"({"i":)" + N(i) + "}", std::nullopt}, std::nullopt);
      ASSERT_TRUE(r) << r.error().message;
    }
  }

  std::string Column(int64_t delivery_id, const std::string& column) {
    return db_.Scalar("SELECT " + column + " FROM " + testing::kDeliveryState +
                      " dr WHERE id = " + N(delivery_id));
  }

  // Seconds from the database's now() to `column` of the delivery.
  double SecondsFromNow(int64_t delivery_id, const std::string& column) {
    return std::stod(db_.Scalar("SELECT extract(epoch FROM " + column + " - now()) FROM " +
                                testing::kDeliveryState + " dr WHERE id = " + N(delivery_id)));
  }
};

TEST_F(ClaimPgTest, TwoClaimersNeverGetTheSameDelivery) {
  for (int i = 0; i < 10; ++i) CreateDestination(1000);
  Ingest(50);
  ASSERT_EQ(db_.Scalar("SELECT count(*) FROM " + testing::kDeliveryState +
                       " dr WHERE status = 'pending'"),
            "500");

  std::mutex mu;
  std::vector<ClaimedDelivery> all;
  std::vector<int64_t> per_claimer[2];
  std::latch start(2);
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&, t] {
      start.arrive_and_wait();
      for (;;) {
        auto batch = store_.ClaimDue(7, 1h, 16);
        ASSERT_TRUE(batch) << batch.error().message;
        if (batch->deliveries.empty()) break;
        std::lock_guard lock(mu);
        for (const auto& c : batch->deliveries) {
          per_claimer[t].push_back(c.delivery_id);
          all.push_back(c);
        }
      }
    });
  }
  for (auto& t : threads) t.join();

  std::set<int64_t> ids;
  for (const auto& c : all) EXPECT_TRUE(ids.insert(c.delivery_id).second) << c.delivery_id;
  EXPECT_EQ(all.size(), 500u);
  EXPECT_EQ(ids.size(), 500u);
  EXPECT_FALSE(per_claimer[0].empty() && per_claimer[1].empty());
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM " + testing::kDeliveryState +
                       " dr WHERE status = 'in_flight'"
                       " AND lease_until > now() + interval '50 minutes' AND claim_token IS NOT "
                       "NULL"),
            "500");
  // The database holds each claimer's token for what it claimed.
  std::string pairs;
  for (const auto& c : all) {
    pairs += (pairs.empty() ? "" : ",") + std::string("(") + N(c.delivery_id) + "," +
             N(c.claim_token) + ")";
  }
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM " + testing::kDeliveryState + " d JOIN (VALUES " +
                       pairs + ") AS v(id, token) ON d.id = v.id AND d.claim_token = v.token"),
            "500");
}

TEST_F(ClaimPgTest, AClaimCarriesTheDeliveryAndLeasesIt) {
  const int64_t dst = CreateDestination();
  auto event =
      store_.InsertEvent(NewEvent{"order.created", R"({"id":123})", std::nullopt}, std::nullopt);
  ASSERT_TRUE(event);
  ASSERT_EQ(event->event.deliveries.size(), 1u);
  const int64_t id = event->event.deliveries[0].id;
  EXPECT_EQ(Column(id, "status"), "pending");

  auto claimed = Claim(10, 30s);
  ASSERT_EQ(claimed.size(), 1u);
  const ClaimedDelivery& c = claimed[0];
  EXPECT_EQ(c.delivery_id, id);
  EXPECT_EQ(c.event_id, event->event.id);
  EXPECT_EQ(c.event_type, "order.created");
  EXPECT_EQ(c.payload, R"({"id":123})");
  EXPECT_EQ(c.event_created_at, event->event.created_at);
  EXPECT_EQ(c.destination_id, dst);
  EXPECT_EQ(c.url, "https://example.com/hook");
  EXPECT_EQ(c.secrets, std::vector<std::string>{"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"});
  EXPECT_EQ(c.headers, (Headers{{"X-Tenant", "acme"}}));
  EXPECT_EQ(c.attempt_count, 0);
  EXPECT_EQ(c.cycle_attempts, 0);

  EXPECT_EQ(Column(id, "status"), "in_flight");
  EXPECT_EQ(Column(id, "claim_token"), N(c.claim_token));
  const double lease = SecondsFromNow(id, "lease_until");
  EXPECT_GT(lease, 20);
  EXPECT_LE(lease, 30);
  auto got = store_.GetDelivery(id, Scope::All());
  ASSERT_TRUE(got);
  EXPECT_EQ(got->status, DeliveryStatus::kInFlight);
  EXPECT_TRUE(Claim(10).empty());
  auto gauges = store_.CountDeliveries();
  ASSERT_TRUE(gauges);
  EXPECT_EQ(gauges->in_flight, 1);
  EXPECT_EQ(gauges->pending, 0);
}

TEST_F(ClaimPgTest, AnExpiredLeaseIsClaimedAgainWithANewToken) {
  CreateDestination();
  Ingest(2);
  auto short_lease = Claim(1, 1ms);
  ASSERT_EQ(short_lease.size(), 1u);
  auto long_lease = Claim(1, 1h);
  ASSERT_EQ(long_lease.size(), 1u);
  std::this_thread::sleep_for(50ms);

  auto requeued = store_.RequeueExpiredLeases();
  ASSERT_TRUE(requeued) << requeued.error().message;
  EXPECT_EQ(*requeued, 1);
  const int64_t id = short_lease[0].delivery_id;
  EXPECT_EQ(Column(id, "status"), "pending");
  EXPECT_EQ(Column(id, "claim_token"), "");
  EXPECT_EQ(Column(long_lease[0].delivery_id, "status"), "in_flight");
  EXPECT_EQ(Column(id, "attempt_count"), "0");

  auto again = Claim(10, 1h);
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].delivery_id, id);
  EXPECT_NE(again[0].claim_token, short_lease[0].claim_token);
  EXPECT_EQ(Column(id, "claim_token"), N(again[0].claim_token));
  EXPECT_EQ(store_.RequeueExpiredLeases().value_or(-1), 0);

  // The worker that lost the lease comes back: its token changes nothing.
  auto stale =
      Record({RecordFor(short_lease[0], DeliveryStatus::kSucceeded, 200, Outcome::kSuccess)});
  EXPECT_TRUE(stale.empty());
  EXPECT_EQ(Column(id, "status"), "in_flight");
  EXPECT_EQ(Column(id, "claim_token"), N(again[0].claim_token));
  EXPECT_EQ(Column(id, "attempt_count"), "0");
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM attempts"), "0");
  const ReleasedClaim stale_release{id, short_lease[0].claim_token};
  EXPECT_EQ(store_.ReleaseClaims({&stale_release, 1}).value_or(-1), 0);
  EXPECT_EQ(Column(id, "status"), "in_flight");

  // The fresh claim's record is applied.
  auto fresh = Record({RecordFor(again[0], DeliveryStatus::kSucceeded, 200, Outcome::kSuccess)});
  EXPECT_THAT(fresh, ::testing::ElementsAre(id));
  EXPECT_EQ(Column(id, "status"), "succeeded");
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM attempts WHERE delivery_id = " + N(id)), "1");
}

TEST_F(ClaimPgTest, ADisabledDestinationsDeliveriesWaitUntilItIsEnabled) {
  const int64_t dst = CreateDestination();
  Ingest(3);
  DestinationFields off, on;
  off.enabled = false;
  on.enabled = true;
  auto disabled = store_.UpdateDestination(dst, off, Scope::All());
  ASSERT_TRUE(disabled);
  EXPECT_FALSE(disabled->enabled);

  EXPECT_TRUE(Claim(10).empty());
  auto next = store_.NextDueAt();
  ASSERT_TRUE(next);
  EXPECT_FALSE(next->has_value());
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM " + testing::kDeliveryState +
                       " dr WHERE status = 'pending'"),
            "3");

  ASSERT_TRUE(store_.UpdateDestination(dst, on, Scope::All()));
  next = store_.NextDueAt();
  ASSERT_TRUE(next);
  ASSERT_TRUE(next->has_value());
  EXPECT_LE(**next, SystemClock().Now() + 1s);
  auto claimed = Claim(10);
  EXPECT_EQ(claimed.size(), 3u);
  for (const auto& c : claimed) EXPECT_EQ(c.attempt_count, 0);
}

// A claim takes destinations' due deliveries in turns, oldest first within each, so equal
// backlogs drain side by side (the order of due times alone drained one at a time).
TEST_F(ClaimPgTest, AClaimTakesEachDestinationsOldestInTurns) {
  const int64_t a = CreateDestination(64);
  const int64_t b = CreateDestination(64);
  const int64_t c = CreateDestination(64);
  Ingest(10);  // 10 deliveries each, in the same transactions, so ties on due time
  // Give destination a an older backlog: it still gets only its turn, oldest first.
  db_.Exec(
      "UPDATE delivery_queue SET next_attempt_at = now() - ((id & 68719476735) || ' "
      "seconds')::interval"
      " WHERE destination_id = " +
      N(a));
  const auto claimed = Claim(6, 1h, 64);
  ASSERT_EQ(claimed.size(), 6u);
  std::map<int64_t, std::vector<int64_t>> by_destination;
  for (const auto& d : claimed) by_destination[d.destination_id].push_back(d.delivery_id);
  for (int64_t id : {a, b, c}) {
    SCOPED_TRACE(id);
    EXPECT_EQ(by_destination[id].size(), 2u);
  }
  // a's two are its two oldest due: the highest ids (due as many seconds ago as an id's
  // number, the bits below its day: migrations/0038_history_days.sql).
  const std::string oldest =
      db_.Scalar("SELECT string_agg(id::text, ',' ORDER BY id) FROM (SELECT id FROM " +
                 testing::kDeliveryState +
                 " dr"
                 " WHERE destination_id = " +
                 N(a) + " ORDER BY next_attempt_at LIMIT 2) x");
  std::vector<int64_t> mine = by_destination[a];
  std::sort(mine.begin(), mine.end());
  EXPECT_EQ(N(mine[0]) + "," + N(mine[1]), oldest);
}

TEST_F(ClaimPgTest, NextDueAtIsTheEarliestPendingOfAnEnabledDestination) {
  const int64_t on = CreateDestination(std::nullopt, {"a.*"});
  const int64_t off = CreateDestination(std::nullopt, {"b.*"});
  Ingest(1, "a.x");
  Ingest(1, "b.x");
  db_.Exec(
      "UPDATE delivery_queue SET next_attempt_at = '2030-01-01T00:00:00Z' WHERE destination_id = " +
      N(on));
  db_.Exec(
      "UPDATE delivery_queue SET next_attempt_at = '2029-01-01T00:00:00Z' WHERE destination_id = " +
      N(off));
  DestinationFields disable;
  disable.enabled = false;
  ASSERT_TRUE(store_.UpdateDestination(off, disable, Scope::All()));
  // The hints written at ingest are early: the worker wakes, its claim finds nothing due
  // and moves them to the real times.
  auto early = store_.NextDueAt();
  ASSERT_TRUE(early);
  ASSERT_TRUE(early->has_value());
  EXPECT_LE(**early, *ParseRfc3339("2030-01-01T00:00:00Z"));
  EXPECT_TRUE(Claim(10).empty());  // not due yet, so not claimed
  auto next = store_.NextDueAt();
  ASSERT_TRUE(next);
  ASSERT_TRUE(next->has_value());
  EXPECT_EQ(**next, *ParseRfc3339("2030-01-01T00:00:00Z"));  // the disabled one's is passed over
}

TEST_F(ClaimPgTest, TheDestinationCapHoldsAcrossConcurrentClaimers) {
  const int64_t dst = CreateDestination(3);
  Ingest(20);
  for (int round = 0; round < 3; ++round) {
    std::latch start(2);
    std::vector<ClaimedDelivery> got[2];
    std::vector<std::thread> threads;
    for (int t = 0; t < 2; ++t) {
      threads.emplace_back([&, t] {
        start.arrive_and_wait();
        auto r = store_.ClaimDue(10, 1h, 16);
        ASSERT_TRUE(r) << r.error().message;
        got[t] = r->deliveries;
      });
    }
    for (auto& t : threads) t.join();
    EXPECT_EQ(got[0].size() + got[1].size(), 3u) << "round " << round;
    EXPECT_EQ(db_.Scalar("SELECT count(*) FROM " + testing::kDeliveryState +
                         " dr WHERE status = 'in_flight'"),
              "3");
    // Finishing them frees the room for the next round.
    std::vector<AttemptRecord> done;
    for (const auto& batch : got) {
      for (const auto& c : batch) {
        EXPECT_EQ(c.destination_id, dst);
        done.push_back(RecordFor(c, DeliveryStatus::kSucceeded, 200, Outcome::kSuccess));
      }
    }
    EXPECT_EQ(Record(done).size(), done.size());
  }
  // One finished delivery makes room for exactly one more.
  auto three = Claim(10);
  ASSERT_EQ(three.size(), 3u);
  EXPECT_TRUE(Claim(10).empty());
  ASSERT_EQ(
      Record({RecordFor(three[0], DeliveryStatus::kSucceeded, 200, Outcome::kSuccess)}).size(), 1u);
  EXPECT_EQ(Claim(10).size(), 1u);
}

TEST_F(ClaimPgTest, TheDefaultCapAppliesWhenTheDestinationHasNone) {
  const int64_t capped = CreateDestination(6, {"a.*"});
  const int64_t uncapped = CreateDestination(std::nullopt, {"b.*"});
  Ingest(20, "a.x");
  Ingest(20, "b.x");

  auto claimed = Claim(100, 1h, /*default_cap=*/4);
  int to_capped = 0, to_uncapped = 0;
  for (const auto& c : claimed) (c.destination_id == capped ? to_capped : to_uncapped)++;
  EXPECT_EQ(to_capped, 6);
  EXPECT_EQ(to_uncapped, 4);
  EXPECT_TRUE(Claim(100, 1h, 4).empty());
  // A larger default lets more through for the destination without its own cap only.
  auto more = Claim(100, 1h, 5);
  ASSERT_EQ(more.size(), 1u);
  EXPECT_EQ(more[0].destination_id, uncapped);
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM " + testing::kDeliveryState +
                       " dr WHERE status = 'in_flight'"
                       " AND destination_id = " +
                       N(uncapped)),
            "5");

  // Back to the default: the capped destination now follows it too.
  DestinationFields back;
  back.max_in_flight = std::optional<int>();
  auto updated = store_.UpdateDestination(capped, back, Scope::All());
  ASSERT_TRUE(updated);
  EXPECT_FALSE(updated->max_in_flight);
  EXPECT_EQ(Claim(100, 1h, 6).size(), 1u);  // uncapped: 5 -> 6; capped already at 6
}

TEST_F(ClaimPgTest, ASuccessIsRecordedWithItsAttempt) {
  CreateDestination();
  Ingest(1);
  auto claimed = Claim(1);
  ASSERT_EQ(claimed.size(), 1u);
  const int64_t id = claimed[0].delivery_id;
  AttemptRecord r = RecordFor(claimed[0], DeliveryStatus::kSucceeded, 200, Outcome::kSuccess);
  r.response_body = "ok";
  EXPECT_THAT(Record({r}), ::testing::ElementsAre(id));

  EXPECT_EQ(Column(id, "status"), "succeeded");
  EXPECT_EQ(Column(id, "attempt_count"), "1");
  EXPECT_EQ(Column(id, "cycle_attempts"), "1");
  EXPECT_EQ(Column(id, "last_status_code"), "200");
  EXPECT_EQ(Column(id, "coalesce(next_attempt_at::text, lease_until::text, claim_token::text)"),
            "");
  auto delivery = store_.GetDelivery(id, Scope::All());
  ASSERT_TRUE(delivery);
  EXPECT_EQ(delivery->status, DeliveryStatus::kSucceeded);
  EXPECT_EQ(delivery->last_attempt_at, r.started_at);
  auto attempts = store_.ListAttempts(id, AttemptPage{}, Scope::All());
  ASSERT_TRUE(attempts);
  ASSERT_EQ(attempts->items.size(), 1u);
  EXPECT_EQ(attempts->items[0].attempt_number, 1);
  EXPECT_EQ(attempts->items[0].started_at, r.started_at);
  EXPECT_EQ(attempts->items[0].duration_ms, 12);
  EXPECT_EQ(attempts->items[0].status_code, 200);
  EXPECT_FALSE(attempts->items[0].error);
  EXPECT_EQ(attempts->items[0].response_body, "ok");
  EXPECT_EQ(attempts->items[0].outcome, Outcome::kSuccess);
  // Recording it twice changes nothing.
  EXPECT_TRUE(Record({r}).empty());
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM attempts"), "1");
}

TEST_F(ClaimPgTest, ARetryIsDueAfterItsWaitAndCountsTheAttempt) {
  CreateDestination();
  Ingest(1);
  auto first = Claim(1);
  ASSERT_EQ(first.size(), 1u);
  const int64_t id = first[0].delivery_id;
  AttemptRecord r = RecordFor(first[0], DeliveryStatus::kPending, 503, Outcome::kRetryable);
  r.wait = 120s;
  r.error = "HTTP 503";
  ASSERT_THAT(Record({r}), ::testing::ElementsAre(id));

  EXPECT_EQ(Column(id, "status"), "pending");
  EXPECT_EQ(Column(id, "attempt_count"), "1");
  EXPECT_EQ(Column(id, "cycle_attempts"), "1");
  EXPECT_EQ(Column(id, "claim_token"), "");
  EXPECT_EQ(Column(id, "last_error"), "HTTP 503");
  EXPECT_NEAR(SecondsFromNow(id, "next_attempt_at"), 120, 5);
  // The claim that took it left its destination's hint at now (its offer was full): the
  // next claim finds nothing due and moves the hint to the retry's time.
  EXPECT_TRUE(Claim(1).empty());  // not due yet
  auto next = store_.NextDueAt();
  ASSERT_TRUE(next);
  ASSERT_TRUE(next->has_value());
  EXPECT_NEAR(Seconds(**next - SystemClock().Now()), 120, 5);

  db_.Exec("UPDATE delivery_queue SET next_attempt_at = now() WHERE id = " + N(id));
  auto second = Claim(1);
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(second[0].attempt_count, 1);
  EXPECT_EQ(second[0].cycle_attempts, 1);
  AttemptRecord r2 =
      RecordFor(second[0], DeliveryStatus::kPending, std::nullopt, Outcome::kRetryable);
  r2.error = "connection refused";
  r2.wait = 0s;
  EXPECT_EQ(r2.attempt_number, 2);
  ASSERT_THAT(Record({r2}), ::testing::ElementsAre(id));
  EXPECT_EQ(Column(id, "attempt_count"), "2");
  EXPECT_EQ(Column(id, "cycle_attempts"), "2");
  EXPECT_EQ(Column(id, "last_status_code"), "");
  EXPECT_EQ(Column(id, "last_error"), "connection refused");

  auto attempts = store_.ListAttempts(id, AttemptPage{}, Scope::All());
  ASSERT_TRUE(attempts);
  ASSERT_EQ(attempts->items.size(), 2u);
  EXPECT_EQ(attempts->items[0].attempt_number, 1);
  EXPECT_EQ(attempts->items[0].status_code, 503);
  EXPECT_EQ(attempts->items[1].attempt_number, 2);
  EXPECT_FALSE(attempts->items[1].status_code);
  EXPECT_EQ(attempts->items[1].error, "connection refused");
  EXPECT_LE(attempts->items[0].started_at, attempts->items[1].started_at);
}

TEST_F(ClaimPgTest, ListAttemptsIsOldestFirstAndNotFoundForAnUnknownDelivery) {
  CreateDestination();
  Ingest(1);
  // Attempts written out of order still list by attempt number.
  auto claimed = Claim(1);
  ASSERT_EQ(claimed.size(), 1u);
  const int64_t id = claimed[0].delivery_id;
  db_.Exec(
      "INSERT INTO attempts (delivery_id, attempt_number, started_at, duration_ms, outcome)"
      " VALUES (" +
      N(id) + ", 3, now(), 1, 'retryable'), (" + N(id) + ", 1, now(), 1, 'retryable'), (" + N(id) +
      ", 2, now(), 1, 'retryable')");
  auto attempts = store_.ListAttempts(id, AttemptPage{}, Scope::All());
  ASSERT_TRUE(attempts);
  ASSERT_EQ(attempts->items.size(), 3u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(attempts->items[i].attempt_number, i + 1);
  auto none = store_.ListAttempts(id + 1000, AttemptPage{}, Scope::All());
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().kind, ErrorKind::kNotFound);
}

TEST_F(ClaimPgTest, ADeadLetterIsWrittenWithItsReason) {
  const int64_t dst = CreateDestination();
  Ingest(1);
  auto claimed = Claim(1);
  ASSERT_EQ(claimed.size(), 1u);
  const int64_t id = claimed[0].delivery_id;
  AttemptRecord r = RecordFor(claimed[0], DeliveryStatus::kDeadLettered, 500, Outcome::kRetryable);
  r.dead_letter_reason = DeadLetterReason::kExhausted;
  r.error = "HTTP 500";
  ASSERT_THAT(Record({r}), ::testing::ElementsAre(id));

  EXPECT_EQ(Column(id, "status"), "dead_lettered");
  EXPECT_EQ(Column(id, "next_attempt_at"), "");
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM attempts WHERE delivery_id = " + N(id)), "1");
  auto letters = store_.ListDeadLetters({}, Page{}, Scope::All());
  ASSERT_TRUE(letters);
  ASSERT_EQ(letters->items.size(), 1u);
  const DeadLetter& dl = letters->items[0];
  EXPECT_EQ(dl.delivery_id, id);
  EXPECT_EQ(dl.event_id, claimed[0].event_id);
  EXPECT_EQ(dl.destination_id, dst);
  EXPECT_EQ(dl.reason, DeadLetterReason::kExhausted);
  EXPECT_EQ(dl.attempt_count, 1);
  EXPECT_EQ(dl.last_status_code, 500);
  EXPECT_EQ(dl.last_error, "HTTP 500");
  EXPECT_FALSE(dl.replayed_at);
  auto gone = store_.GetDestination(dst, Scope::All());
  ASSERT_TRUE(gone);
  EXPECT_TRUE(gone->enabled);
}

TEST_F(ClaimPgTest, A410DeadLettersAndDisablesOnlyItsDestination) {
  const int64_t gone = CreateDestination(std::nullopt, {"a.*"});
  const int64_t fine = CreateDestination(std::nullopt, {"b.*"});
  Ingest(1, "a.x");
  Ingest(1, "b.x");
  auto claimed = Claim(10);
  ASSERT_EQ(claimed.size(), 2u);
  std::vector<AttemptRecord> records;
  for (const auto& c : claimed) {
    if (c.destination_id == gone) {
      AttemptRecord r = RecordFor(c, DeliveryStatus::kDeadLettered, 410, Outcome::kPermanent);
      r.dead_letter_reason = DeadLetterReason::kPermanentFailure;
      r.disable_destination = true;
      records.push_back(r);
    } else {
      AttemptRecord r = RecordFor(c, DeliveryStatus::kPending, 500, Outcome::kRetryable);
      r.wait = 30s;
      records.push_back(r);
    }
  }
  EXPECT_EQ(Record(records).size(), 2u);
  auto disabled = store_.GetDestination(gone, Scope::All());
  ASSERT_TRUE(disabled);
  EXPECT_FALSE(disabled->enabled);
  auto enabled = store_.GetDestination(fine, Scope::All());
  ASSERT_TRUE(enabled);
  EXPECT_TRUE(enabled->enabled);
  EXPECT_EQ(db_.Scalar("SELECT reason FROM dead_letters WHERE destination_id = " + N(gone)),
            "permanent_failure");
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM dead_letters"), "1");
}

TEST_F(ClaimPgTest, ABatchOfOutcomesIsWrittenTogetherAndKeepsItsText) {
  CreateDestination();
  Ingest(4);
  auto claimed = Claim(10);
  ASSERT_EQ(claimed.size(), 4u);
  // Text that array literals must quote: quotes, backslashes, commas, braces, NULL.
  const std::string tricky = "say \"hi\", {x}\\y\nNULL é";
  std::vector<AttemptRecord> records = {
      RecordFor(claimed[0], DeliveryStatus::kSucceeded, 204, Outcome::kSuccess),
      RecordFor(claimed[1], DeliveryStatus::kPending, 429, Outcome::kRetryable),
      RecordFor(claimed[2], DeliveryStatus::kDeadLettered, 404, Outcome::kPermanent),
      RecordFor(claimed[3], DeliveryStatus::kPending, std::nullopt, Outcome::kRetryable)};
  records[0].response_body = tricky;
  records[1].error = tricky;
  records[1].wait = 60s;
  records[2].dead_letter_reason = DeadLetterReason::kPermanentFailure;
  records[2].response_body = "NULL";
  records[3].error = "NULL";
  records[3].response_body = "";
  // A stale record in the same batch is skipped alone.
  AttemptRecord stale = records[0];
  stale.claim_token ^= 1;
  stale.attempt_number = 7;
  records.push_back(stale);

  auto applied = Record(records);
  std::sort(applied.begin(), applied.end());
  std::vector<int64_t> expected;
  for (const auto& c : claimed) expected.push_back(c.delivery_id);
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(applied, expected);
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM attempts"), "4");

  auto a0 = store_.ListAttempts(claimed[0].delivery_id, AttemptPage{}, Scope::All());
  ASSERT_TRUE(a0);
  ASSERT_EQ(a0->items.size(), 1u);
  EXPECT_EQ(a0->items[0].response_body, tricky);
  EXPECT_EQ(Column(claimed[1].delivery_id, "last_error"), tricky);
  EXPECT_EQ(Column(claimed[1].delivery_id, "status"), "pending");
  auto a2 = store_.ListAttempts(claimed[2].delivery_id, AttemptPage{}, Scope::All());
  ASSERT_TRUE(a2);
  EXPECT_EQ(a2->items[0].response_body, "NULL");
  EXPECT_EQ(Column(claimed[2].delivery_id, "status"), "dead_lettered");
  EXPECT_EQ(Column(claimed[3].delivery_id, "last_error IS NULL"), "f");
  EXPECT_EQ(Column(claimed[3].delivery_id, "last_error"), "NULL");
  EXPECT_EQ(Column(claimed[3].delivery_id, "last_status_code IS NULL"), "t");
}

TEST_F(ClaimPgTest, ReleasedClaimsArePendingAndDueWithNoAttemptUsed) {
  CreateDestination();
  Ingest(3);
  auto claimed = Claim(10);
  ASSERT_EQ(claimed.size(), 3u);
  std::vector<ReleasedClaim> release = {{claimed[0].delivery_id, claimed[0].claim_token},
                                        {claimed[1].delivery_id, claimed[1].claim_token}};
  auto released = store_.ReleaseClaims(release);
  ASSERT_TRUE(released) << released.error().message;
  EXPECT_EQ(*released, 2);
  for (int i = 0; i < 2; ++i) {
    const int64_t id = claimed[i].delivery_id;
    EXPECT_EQ(Column(id, "status"), "pending");
    EXPECT_EQ(Column(id, "claim_token"), "");
    EXPECT_EQ(Column(id, "lease_until"), "");
    EXPECT_EQ(Column(id, "attempt_count"), "0");
    EXPECT_EQ(Column(id, "cycle_attempts"), "0");
    EXPECT_NEAR(SecondsFromNow(id, "next_attempt_at"), 0, 5);
  }
  EXPECT_EQ(Column(claimed[2].delivery_id, "status"), "in_flight");
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM attempts"), "0");
  // Released twice: nothing more.
  EXPECT_EQ(store_.ReleaseClaims(release).value_or(-1), 0);

  auto again = Claim(10);
  ASSERT_EQ(again.size(), 2u);
  for (const auto& c : again) {
    EXPECT_EQ(c.attempt_count, 0);
    EXPECT_EQ(c.cycle_attempts, 0);
  }
}

// Plans are logged by auto_explain at LOG level and reach the client as notices.
struct PlanCapture final : pqxx::errorhandler {
  explicit PlanCapture(pqxx::connection_base& c) : pqxx::errorhandler(c) {}
  bool operator()(const char message[]) noexcept override {
    text += message;
    return true;
  }
  std::string text;
};

// From here on the session's plans, the claim function's statements included, reach
// PlanCapture as notices.
void LogNestedPlans(pqxx::transaction_base& tx) {
  tx.exec("SET client_min_messages = log");
  tx.exec("LOAD 'auto_explain'");
  tx.exec("SET auto_explain.log_min_duration = 0");
  tx.exec("SET auto_explain.log_nested_statements = on");
}

// The claim's events lookup (in its UPDATE since migration 0023, before the baseline) probes the
// primary key once per claimed row: a plain join was merged or hashed against the whole events
// table on every claim, a cost that grew with every stored event.
TEST_F(ClaimPgTest, TheTraceContextLookupProbesEventsByIdNotTheWholeTable) {
  CreateDestination(64);
  db_.Exec(
      "INSERT INTO events (type, payload) SELECT 'order.created', '{}' "
      "FROM generate_series(1, 20000)");
  Ingest(5);
  db_.Exec("ANALYZE events");
  auto conn = testing::TestDatabase::Connect(db_.url());
  PlanCapture plans(*conn);
  pqxx::nontransaction tx(*conn);
  LogNestedPlans(tx);
  EXPECT_EQ(tx.exec("SELECT * FROM claim_due(64, 60000000, 1, 16)").size(), 5u);
  // Each day's partition by its own primary key (migrations/0038_history_days.sql).
  EXPECT_THAT(plans.text,
              ::testing::ContainsRegex("Index Scan using events_p[0-9]+_pkey on events"))
      << plans.text;
  EXPECT_THAT(plans.text, ::testing::Not(::testing::HasSubstr("Merge Join"))) << plans.text;
  EXPECT_THAT(plans.text, ::testing::Not(::testing::HasSubstr("Seq Scan on events"))) << plans.text;
  // The queue rows it takes are found by key too, even with the queue never analyzed.
  EXPECT_THAT(plans.text,
              ::testing::HasSubstr("Index Scan using delivery_queue_pkey on delivery_queue q"))
      << plans.text;
}

// The claim's one plan is made at a connection's first claim. Made on an empty database
// it read deliveries whole (a sequential scan hashed against the picked rows), and kept
// doing so as the table grew, until an ANALYZE: a claim of 16 rows took 16 ms at 50,000.
TEST_F(ClaimPgTest, AClaimPlannedOnAnEmptyDatabaseStillFindsItsRowsByKeyOnceItHasGrown) {
  CreateDestination(64);
  auto conn = testing::TestDatabase::Connect(db_.url());
  PlanCapture plans(*conn);
  pqxx::nontransaction tx(*conn);
  EXPECT_EQ(tx.exec("SELECT * FROM claim_due(64, 60000000, 1, 16)").size(), 0u);
  tx.exec(
      "INSERT INTO events (type, payload) SELECT 'order.created', '{}' "
      "FROM generate_series(1, 5000)");
  tx.exec(
      "INSERT INTO deliveries (event_id, destination_id) "
      "SELECT e.id, (SELECT min(id) FROM destinations) FROM events e");
  LogNestedPlans(tx);
  EXPECT_EQ(tx.exec("SELECT * FROM claim_due(16, 60000000, 2, 16)").size(), 16u);
  EXPECT_THAT(plans.text, ::testing::HasSubstr("Update on delivery_queue")) << plans.text;
  EXPECT_THAT(plans.text, ::testing::Not(::testing::HasSubstr("Seq Scan"))) << plans.text;
}

// A claim writes only the queue rows it takes: it offers each destination twice its even
// share of the batch (migration 0025, before the baseline), not its whole free cap, and
// locks none of what it offers, as claims run one at a time under the claim lock (a row
// lock is a WAL record per row). 10 destinations with room for 16 and a claim of 8: 8
// rows taken, one per destination, and no other row touched.
TEST_F(ClaimPgTest, AClaimWritesOnlyTheRowsItTakesAndLocksNoneItOffers) {
  for (int i = 0; i < 10; ++i) CreateDestination(16);
  Ingest(16);
  auto conn = testing::TestDatabase::Connect(db_.url());
  pqxx::work tx(*conn);
  const auto claimed = tx.exec("SELECT destination_id FROM claim_due(8, 60000000, 1, 16)");
  ASSERT_EQ(claimed.size(), 8u);
  std::set<int64_t> destinations;
  for (const auto& row : claimed) destinations.insert(row[0].as<int64_t>());
  EXPECT_EQ(destinations.size(), 8u);  // each destination's first turn
  // Written (or locked) by this transaction: the 8 it took, in the queue alone.
  const std::string mine = " WHERE xmax = txid_current()::text::xid";
  EXPECT_EQ(tx.exec1("SELECT count(*) FROM delivery_queue" + mine)[0].as<int>(), 0)
      << "rows offered and locked, not taken";
  EXPECT_EQ(
      tx.exec1("SELECT count(*) FROM delivery_queue WHERE xmin = txid_current()::text::xid")[0]
          .as<int>(),
      8);
  EXPECT_EQ(tx.exec1("SELECT count(*) FROM deliveries" + mine)[0].as<int>(), 0);
  EXPECT_EQ(tx.exec1("SELECT count(*) FROM deliveries WHERE xmin = txid_current()::text::xid")[0]
                .as<int>(),
            0);
}

// Deliveries due at the same moment (one ingest statement stamps them all) are taken in
// an order each claim draws afresh from its token: the same destinations do not always go
// first, to drain first while the rest wait (migration 0025, before the baseline).
TEST_F(ClaimPgTest, TiesInDueTimeGoToDifferentDestinationsFirstAtEachClaim) {
  std::vector<int64_t> all;
  for (int i = 0; i < 10; ++i) all.push_back(CreateDestination(16));
  db_.Exec("INSERT INTO events (type, payload) VALUES ('order.created', '{}')");
  db_.Exec(
      "INSERT INTO deliveries (event_id, destination_id)"
      " SELECT (SELECT max(id) FROM events), d.id FROM destinations d;"
      " UPDATE delivery_queue SET next_attempt_at = '2026-01-01Z'");
  auto conn = testing::TestDatabase::Connect(db_.url());
  std::set<int64_t> first;
  for (int token = 1; token <= 20; ++token) {
    pqxx::work tx(*conn);  // rolled back: each claim sees all ten due
    const auto claimed =
        tx.exec("SELECT destination_id FROM claim_due(5, 60000000, " + N(token) + ", 16)");
    ASSERT_EQ(claimed.size(), 5u);
    for (const auto& row : claimed) first.insert(row[0].as<int64_t>());
  }
  EXPECT_EQ(first, std::set<int64_t>(all.begin(), all.end()));
}

// Makes the one plan of each statement that ends claims, on `conn`, with no record.
void PlanClaimEnds(pqxx::connection& conn) {
  pqxx::nontransaction tx(conn);
  tx.exec_prepared("record_successes", "{}", "{}", "{}", "{}", "{}", "{}", "{}");
  tx.exec_prepared("record_outcomes", "{}", "{}", "{}", "{}", "{}", "{}", "{}", "{}", "{}", "{}",
                   "{}", "{}", "{}", "{}", 5, 30000000, 3600000000, "0.2", 0, 16,
                   pg::kWakeupChannel, "{}");
  tx.exec_prepared("release_claims", "{}", "{}");
}

// The statements that end claims, run as the worker runs them (its connections' plan
// settings), each with three records of claims made by `claim` at 1,024 in flight.
// Returns the plans auto_explain logged for them.
std::string PlansOfClaimEnds(pqxx::connection& conn, const std::vector<ClaimedDelivery>& claim) {
  const auto ids = [&](size_t from) {
    return "{" + N(claim[from].delivery_id) + "," + N(claim[from + 1].delivery_id) + "," +
           N(claim[from + 2].delivery_id) + "}";
  };
  const auto tokens = "{" + N(claim[0].claim_token) + "," + N(claim[0].claim_token) + "," +
                      N(claim[0].claim_token) + "}";
  PlanCapture plans(conn);
  pqxx::nontransaction tx(conn);
  LogNestedPlans(tx);
  EXPECT_EQ(tx.exec_prepared("record_successes", ids(0), tokens, "{1,1,1}",
                             "{2026-01-01Z,2026-01-01Z,2026-01-01Z}", "{1,1,1}", "{200,200,200}",
                             "{\"\",\"\",\"\"}")
                .size(),
            3u);
  EXPECT_EQ(
      tx.exec_prepared("record_outcomes", ids(3), tokens, "{1,1,1}",
                       "{2026-01-01Z,2026-01-01Z,2026-01-01Z}", "{1,1,1}", "{503,503,503}",
                       "{NULL,NULL,NULL}", "{\"\",\"\",\"\"}", "{retryable,retryable,retryable}",
                       "{pending,pending,pending}", "{30000000,30000000,30000000}",
                       "{NULL,NULL,NULL}", "{f,f,f}", "{f,f,f}", 5, 30000000, 3600000000, "0.2", 0,
                       16, pg::kWakeupChannel, "{0.5,0.5,0.5}")
          .size(),
      3u);
  EXPECT_EQ(tx.exec_prepared("release_claims", ids(6), tokens).affected_rows(), 3u);
  return plans.text;
}

// An outcome finds its row by id and claim token alone (migration 0024, before the baseline), and
// the worker's connections make no hash join (sql/scripts/key_plans.sql): with `status =
// 'in_flight'` asked too, a plan made when few deliveries were in flight hashed the batch
// against all of them, and went on doing so at 1,024 in flight.
TEST_F(ClaimPgTest, OutcomesPlannedWhenFewWereInFlightLookUpEachRowByKeyWhenManyAre) {
  CreateDestination(2000);
  Ingest(1100);
  db_.Exec("ANALYZE deliveries");
  auto conn = pg::PgPool::Connect(db_.url(), pg::Plans::kGenericByKey);
  PlanClaimEnds(*conn);  // each statement's one plan, made with none in flight
  const auto claim = Claim(1024);
  ASSERT_EQ(claim.size(), 1024u);
  const std::string plans = PlansOfClaimEnds(*conn, claim);
  EXPECT_THAT(plans, ::testing::ContainsRegex("Index Scan (using|on) deliveries_p[0-9]+_pkey"))
      << plans;
  EXPECT_THAT(plans, ::testing::Not(::testing::HasSubstr("deliveries_in_flight"))) << plans;
  EXPECT_THAT(plans, ::testing::Not(::testing::HasSubstr("Hash Join"))) << plans;
}

// Made on a new, empty database, the one plan of an outcome must not read deliveries
// whole once the table has grown: no sequential scan hashed against the batch.
TEST_F(ClaimPgTest, OutcomesPlannedOnAnEmptyDatabaseLookUpEachRowByKeyOnceItHasGrown) {
  CreateDestination(2000);
  auto conn = pg::PgPool::Connect(db_.url(), pg::Plans::kGenericByKey);
  PlanClaimEnds(*conn);
  Ingest(1100);
  const auto claim = Claim(1024);
  ASSERT_EQ(claim.size(), 1024u);
  const std::string plans = PlansOfClaimEnds(*conn, claim);
  EXPECT_THAT(plans, ::testing::ContainsRegex("Index Scan (using|on) deliveries_p[0-9]+_pkey"))
      << plans;
  EXPECT_THAT(plans, ::testing::Not(::testing::HasSubstr("Seq Scan on deliveries"))) << plans;
  EXPECT_THAT(plans, ::testing::Not(::testing::HasSubstr("Hash Join"))) << plans;
}

// The claim function holds the claim lock's value itself (it is SQL); it must be the one
// store/pg/locks.h names, or nothing else that takes kClaimLock would exclude claims.
TEST_F(ClaimPgTest, TheClaimFunctionTakesTheClaimLockOfLocksH) {
  const std::string body = db_.Scalar("SELECT pg_get_functiondef('webhookd.claim_due'::regproc)");
  EXPECT_NE(body.find("pg_advisory_xact_lock(" + N(pg::kClaimLock) + ")"), std::string::npos)
      << body;
}

}  // namespace
}  // namespace webhookd::claim_pgtest
