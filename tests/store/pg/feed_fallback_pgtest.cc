// A push destination that falls back to its feed (docs/feeds.md, "Fallback"), on a real
// PostgreSQL: what would be dead-lettered stays pending in the feed and is never claimed
// again; while the circuit is open the due deliveries are read from the feed; a leased
// delivery is not claimed, and a push result after an ack is not recorded; a push and an
// ack racing finish each delivery once.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <latch>
#include <string>
#include <thread>
#include <vector>

#include "store/pg/pg_store.h"
#include "tests/testing/pg_fixture.h"

namespace webhookd::feed_fallback_pgtest {
namespace {

using namespace std::chrono_literals;
using testing::N;

class FeedFallbackPgTest : public testing::PgTest {
 protected:
  int64_t CreateFallback() {
    Destination d = testing::TestDestination();
    d.fallback = Fallback::kFeed;
    return CreateDestination(d);
  }

  int64_t Publish() {
    const std::string event = db_.Scalar("SELECT webhookd.publish('order.updated', '{\"n\":1}')");
    return std::stoll(event.substr(4));
  }

  FeedLease Lease(int64_t destination, int limit, Duration lease = 1h) {
    auto r = store_.LeaseFeed(destination, limit, lease);
    EXPECT_TRUE(r) << r.error().message;
    return r ? *r : FeedLease{};
  }

  // Acks `m` as the API does: a success under its lease token.
  std::vector<int64_t> Ack(const ClaimedDelivery& m) {
    AttemptRecord r =
        testing::RecordFor(m, DeliveryStatus::kSucceeded, std::nullopt, Outcome::kSuccess);
    r.clean = true;
    auto done = store_.RecordFeedOutcomes(std::vector<AttemptRecord>{r});
    EXPECT_TRUE(done) << done.error().message;
    return done ? done->applied : std::vector<int64_t>{};
  }

  // The record of an attempt the worker would dead-letter.
  static AttemptRecord DeadLetter(const ClaimedDelivery& c, int status, Outcome outcome,
                                  DeadLetterReason reason) {
    AttemptRecord r = testing::RecordFor(c, DeliveryStatus::kDeadLettered, status, outcome);
    r.dead_letter_reason = reason;
    return r;
  }

  RecordedOutcomes RecordAll(const std::vector<AttemptRecord>& records) {
    auto r = store_.RecordOutcomes(records, ProtectionSettings{});
    EXPECT_TRUE(r) << r.error().message;
    return r ? *r : RecordedOutcomes{};
  }

  void OpenCircuit(int64_t destination, const std::string& probe_in) {
    db_.Exec(
        "UPDATE webhookd.destinations SET circuit = 'open', consecutive_failures = 5, "
        "next_probe_at = now() + interval '" +
        probe_in + "' WHERE id = " + N(destination));
  }

  std::string Scalar(const std::string& sql) { return db_.Scalar(sql); }
};

TEST_F(FeedFallbackPgTest, TheFallbackIsStoredReadListedAndPatched) {
  const int64_t id = CreateFallback();
  auto got = store_.GetDestination(id, Scope::All());
  ASSERT_TRUE(got);
  EXPECT_EQ(got->fallback, Fallback::kFeed);
  auto listed = store_.ListDestinations({}, Page{}, Scope::All());
  ASSERT_TRUE(listed);
  ASSERT_EQ(listed->items.size(), 1u);
  EXPECT_EQ(listed->items[0].fallback, Fallback::kFeed);
  DestinationFields untouched;
  untouched.description = "kept";
  auto same = store_.UpdateDestination(id, untouched, Scope::All());
  ASSERT_TRUE(same);
  EXPECT_EQ(same->fallback, Fallback::kFeed);
  DestinationFields cleared;
  cleared.fallback = Fallback::kDeadLetter;
  auto patched = store_.UpdateDestination(id, cleared, Scope::All());
  ASSERT_TRUE(patched);
  EXPECT_EQ(patched->fallback, Fallback::kDeadLetter);
  EXPECT_EQ(Scalar("SELECT fallback IS NULL FROM webhookd.destinations WHERE id = " + N(id)), "t");
}

TEST_F(FeedFallbackPgTest, AnExhaustedDeliveryIsPutInTheFeedNotDeadLetteredAndNotClaimedAgain) {
  const int64_t dst = CreateFallback();
  Publish();
  auto claimed = Claim(10);
  ASSERT_EQ(claimed.size(), 1u);
  const RecordedOutcomes r =
      RecordAll({DeadLetter(claimed[0], 500, Outcome::kRetryable, DeadLetterReason::kExhausted)});
  EXPECT_EQ(r.applied, std::vector<int64_t>{claimed[0].delivery_id});
  EXPECT_EQ(r.fallen, std::vector<int64_t>{claimed[0].delivery_id});
  const std::string id = N(claimed[0].delivery_id);
  EXPECT_EQ(Scalar("SELECT count(*) FROM webhookd.dead_letters"), "0");
  EXPECT_EQ(Scalar("SELECT status FROM webhookd.deliveries WHERE id = " + id), "pending");
  EXPECT_EQ(Scalar("SELECT count(*) FROM webhookd.attempts WHERE delivery_id = " + id), "1");
  EXPECT_TRUE(Claim(10).empty());
  const FeedLease lease = Lease(dst, 10);
  ASSERT_EQ(lease.messages.size(), 1u);
  EXPECT_EQ(lease.messages[0].delivery_id, claimed[0].delivery_id);
  EXPECT_LT(lease.messages[0].claim_token, 0);  // a feed's, told from a worker's claim
  EXPECT_EQ(Ack(lease.messages[0]).size(), 1u);
  EXPECT_EQ(Scalar("SELECT status FROM webhookd.deliveries WHERE id = " + id), "succeeded");
  EXPECT_EQ(Scalar("SELECT string_agg(outcome, ',' ORDER BY attempt_number) FROM "
                   "webhookd.attempts WHERE delivery_id = " +
                   id),
            "retryable,success");
  EXPECT_TRUE(Claim(10).empty());
}

TEST_F(FeedFallbackPgTest, APermanentFailureIsPutInTheFeedAndWithoutTheFallbackDeadLettered) {
  const int64_t dst = CreateFallback();
  const int64_t plain = CreateDestination(testing::TestDestination());
  Publish();
  auto claimed = Claim(10);
  ASSERT_EQ(claimed.size(), 2u);
  std::vector<AttemptRecord> records;
  for (const auto& c : claimed) {
    records.push_back(DeadLetter(c, 404, Outcome::kPermanent, DeadLetterReason::kPermanentFailure));
  }
  EXPECT_EQ(Record(records).size(), 2u);
  EXPECT_EQ(Scalar("SELECT string_agg(destination_id::text, ',') FROM webhookd.dead_letters"),
            N(plain));
  EXPECT_TRUE(Claim(10).empty());
  ASSERT_EQ(Lease(dst, 10).messages.size(), 1u);
  EXPECT_TRUE(Lease(plain, 10).messages.empty());  // no fallback: nothing to read
}

TEST_F(FeedFallbackPgTest, AMessageInTheFeedIsNeverDeadLetteredAgain) {
  const int64_t dst = CreateFallback();
  Publish();
  auto claimed = Claim(10);
  ASSERT_EQ(claimed.size(), 1u);
  Record({DeadLetter(claimed[0], 500, Outcome::kRetryable, DeadLetterReason::kExhausted)});
  for (int round = 0; round < 3; ++round) {
    const FeedLease lease = Lease(dst, 10);
    ASSERT_EQ(lease.messages.size(), 1u) << "round " << round;
    // An ended lease or a nack past the schedule: the worker would dead-letter it.
    AttemptRecord r =
        DeadLetter(lease.messages[0], 0, Outcome::kRetryable, DeadLetterReason::kExhausted);
    r.status_code.reset();
    r.error = "lease expired";
    EXPECT_EQ(RecordAll({r}).fallen.size(), 1u);
  }
  EXPECT_EQ(Scalar("SELECT count(*) FROM webhookd.dead_letters"), "0");
  EXPECT_EQ(Scalar("SELECT status || attempt_count FROM webhookd.deliveries"), "pending4");
  // The failures of a consumer are not the receiver's: the circuit is untouched by them.
  EXPECT_EQ(Scalar("SELECT circuit || consecutive_failures FROM webhookd.destinations WHERE id "
                   "= " +
                   N(dst)),
            "closed1");
  EXPECT_EQ(Lease(dst, 10).messages.size(), 1u);
}

TEST_F(FeedFallbackPgTest, WhileTheCircuitIsOpenDueDeliveriesAreReadFromTheFeedAndNotSkipped) {
  const int64_t dst = CreateFallback();
  // Closed: nothing is read from the feed, the claim sends.
  Publish();
  EXPECT_TRUE(Lease(dst, 10).messages.empty());
  OpenCircuit(dst, "1 hour");
  Publish();
  // No skipped attempts: the deliveries wait for the probe, readable meanwhile.
  EXPECT_TRUE(Claim(10).empty());
  EXPECT_EQ(Scalar("SELECT count(*) FROM webhookd.attempts"), "0");
  EXPECT_EQ(Scalar("SELECT count(*) FROM webhookd.due_destinations WHERE destination_id = " +
                   N(dst) + " AND due_at > now() + interval '50 minutes'"),
            "1");
  const FeedLease lease = Lease(dst, 10);
  ASSERT_EQ(lease.messages.size(), 2u);
  EXPECT_EQ(Ack(lease.messages[0]).size(), 1u);
  // A nack of one still on the push schedule waits for its next attempt, then is pushed.
  AttemptRecord nack = testing::RecordFor(lease.messages[1], DeliveryStatus::kPending, std::nullopt,
                                          Outcome::kRetryable);
  nack.error = "nacked";
  EXPECT_EQ(store_.RecordFeedOutcomes(std::vector<AttemptRecord>{nack})->applied.size(), 1u);
  EXPECT_EQ(Scalar("SELECT next_attempt_at < 'infinity' AND feed_at IS NULL FROM "
                   "webhookd.delivery_queue"),
            "t");
  db_.Exec("UPDATE webhookd.destinations SET circuit = 'closed', next_probe_at = NULL");
  auto pushed = Claim(10);
  ASSERT_EQ(pushed.size(), 1u);
  EXPECT_EQ(pushed[0].delivery_id, lease.messages[1].delivery_id);
}

TEST_F(FeedFallbackPgTest, ADeliveryLeasedIsNotClaimedAndAPushResultAfterAnAckIsDiscarded) {
  const int64_t dst = CreateFallback();
  const int64_t event = Publish();
  // A worker claims it.
  auto pushed = Claim(10);
  ASSERT_EQ(pushed.size(), 1u);
  // A worker's claim is no read's lease: an ack finds nothing of its own to settle.
  auto held = store_.FindFeedMessages(dst, std::vector<int64_t>{event});
  ASSERT_TRUE(held);
  ASSERT_EQ(held->size(), 1u);
  EXPECT_FALSE((*held)[0].leased);
  // The worker stalls past its lease; the sweeper requeues the delivery.
  db_.Exec("UPDATE webhookd.delivery_queue SET lease_until = now() - interval '1 second'");
  ASSERT_TRUE(store_.RequeueExpiredLeases());
  OpenCircuit(dst, "0 seconds");  // the probe is due: the claim would take it
  const FeedLease lease = Lease(dst, 10);
  ASSERT_EQ(lease.messages.size(), 1u);
  EXPECT_TRUE(Claim(10).empty());  // leased: not claimed for a push
  EXPECT_EQ(Ack(lease.messages[0]).size(), 1u);
  // The stalled worker's success comes now: its claim is gone, nothing is recorded.
  AttemptRecord late =
      testing::RecordFor(pushed[0], DeliveryStatus::kSucceeded, 200, Outcome::kSuccess);
  EXPECT_TRUE(Record({late}).empty());
  EXPECT_EQ(Scalar("SELECT count(*) FROM webhookd.attempts"), "1");
  EXPECT_TRUE(Claim(10).empty());
}

// A push and a read racing for the same due delivery, many times: exactly one of them gets
// it, and the delivery ends with exactly one success.
TEST_F(FeedFallbackPgTest, APushAndAnAckRacingFinishEachDeliveryOnce) {
  const int64_t dst = CreateFallback();
  constexpr int kRounds = 200;
  int pushed_wins = 0;
  int acked_wins = 0;
  for (int round = 0; round < kRounds; ++round) {
    // The probe is due: both the claim and a read may take the delivery.
    OpenCircuit(dst, "-1 second");
    Publish();
    std::vector<ClaimedDelivery> claimed;
    FeedLease leased;
    std::latch start(2);
    std::thread push([&] {
      start.arrive_and_wait();
      auto r = store_.ClaimDue(10, 1h, 16);
      if (r) claimed = r->deliveries;
    });
    std::thread read([&] {
      start.arrive_and_wait();
      auto r = store_.LeaseFeed(dst, 10, 1h);
      if (r) leased = *r;
    });
    push.join();
    read.join();
    ASSERT_FALSE(!claimed.empty() && !leased.messages.empty())
        << "round " << round << ": claimed and leased at once";
    if (!claimed.empty()) {
      EXPECT_EQ(Record({testing::RecordFor(claimed[0], DeliveryStatus::kSucceeded, 200,
                                           Outcome::kSuccess)})
                    .size(),
                1u);
      ++pushed_wins;
    } else if (!leased.messages.empty()) {
      EXPECT_EQ(Ack(leased.messages[0]).size(), 1u);
      ++acked_wins;
    } else {
      // Neither saw it due (the read ran before the publish committed for it): the feed
      // takes it now.
      const FeedLease again = Lease(dst, 10);
      ASSERT_EQ(again.messages.size(), 1u) << "round " << round;
      EXPECT_EQ(Ack(again.messages[0]).size(), 1u);
    }
    ASSERT_EQ(Scalar("SELECT count(*) FROM webhookd.delivery_queue"), "0") << "round " << round;
  }
  EXPECT_EQ(Scalar("SELECT count(*) FROM webhookd.deliveries WHERE status = 'succeeded'"),
            N(kRounds));
  EXPECT_EQ(Scalar("SELECT count(*) FROM (SELECT delivery_id FROM webhookd.attempts WHERE "
                   "outcome = 'success' GROUP BY delivery_id HAVING count(*) = 1) x"),
            N(kRounds));
  EXPECT_EQ(Scalar("SELECT count(*) FROM webhookd.attempts"), N(kRounds));
  std::printf("pushed first %d times, acked first %d times\n", pushed_wins, acked_wins);
}

}  // namespace
}  // namespace webhookd::feed_fallback_pgtest
