// Feeds on a real PostgreSQL (docs/feeds.md): a feed is never claimed for a send; a read
// leases its oldest waiting messages, exclusively, a fifo feed's key heads alone; an
// ended lease is a failed attempt; a read costs the same beside any number of other
// destinations.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <latch>
#include <mutex>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "store/pg/pg_store.h"
#include "store/pg/statements.h"
#include "tests/testing/pg_fixture.h"

namespace webhookd::feeds_pgtest {
namespace {

using namespace std::chrono_literals;
using testing::N;

class FeedsPgTest : public testing::PgTest {
 protected:
  int64_t CreateFeed(const std::string& ordering = "none") {
    Destination d = testing::TestDestination();
    d.url = "feed:";
    const int64_t id = CreateDestination(d);
    db_.Exec("UPDATE webhookd.destinations SET ordering = '" + ordering + "' WHERE id = " + N(id));
    return id;
  }

  // An event through publish(), with `key` when not empty; returns its id.
  int64_t Publish(const std::string& key = "") {
    const std::string event =
        db_.Scalar("SELECT webhookd.publish('order.updated', '{\"n\":1}'" +
                   (key.empty() ? std::string() : ", ordering_key => '" + key + "'") + ")");
    return std::stoll(event.substr(4));
  }

  FeedLease Lease(int64_t feed, int limit, Duration lease = 1h) {
    auto r = store_.LeaseFeed(feed, limit, lease);
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
};

TEST_F(FeedsPgTest, AFeedGetsItsDeliveriesButIsNeverClaimedForASend) {
  const int64_t feed = CreateFeed();
  const int64_t hook = CreateDestination(testing::TestDestination());
  for (int i = 0; i < 5; ++i) Publish();
  EXPECT_EQ(
      db_.Scalar("SELECT count(*) FROM webhookd.delivery_queue WHERE destination_id = " + N(feed)),
      "5");
  const auto claimed = Claim(100);
  ASSERT_EQ(claimed.size(), 5u);
  for (const auto& c : claimed) EXPECT_EQ(c.destination_id, hook);
  // Visited once, the feed keeps no hint: later claims do not look at it again.
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM webhookd.due_destinations WHERE destination_id = " +
                       N(feed)),
            "0");
  EXPECT_TRUE(Claim(100).empty());
  // Its messages still wait, for a read.
  EXPECT_EQ(Lease(feed, 100).messages.size(), 5u);
}

// The feed gauge: each live feed's waiting and leased messages, an empty feed as zeros,
// a pushed destination not at all; an acked message is neither.
TEST_F(FeedsPgTest, TheGaugeCountsEachFeedsWaitingAndLeasedMessages) {
  const int64_t feed = CreateFeed();
  const int64_t empty = CreateFeed();
  const int64_t hook = CreateDestination(testing::TestDestination());
  for (int i = 0; i < 5; ++i) Publish();
  db_.Exec("DELETE FROM webhookd.delivery_queue WHERE destination_id = " + N(empty));
  const FeedLease leased = Lease(feed, 2);
  ASSERT_EQ(leased.messages.size(), 2u);
  Ack(leased.messages[0]);
  auto counts = store_.CountFeedMessages();
  ASSERT_TRUE(counts) << counts.error().message;
  ASSERT_EQ(counts->size(), 2u);
  EXPECT_EQ((*counts)[0].destination_id, feed);
  EXPECT_EQ((*counts)[0].waiting, 3);
  EXPECT_EQ((*counts)[0].leased, 1);
  EXPECT_EQ((*counts)[1].destination_id, empty);
  EXPECT_EQ((*counts)[1].waiting, 0);
  EXPECT_EQ((*counts)[1].leased, 0);
  for (const auto& c : *counts) EXPECT_NE(c.destination_id, hook);
}

// What wakes the waiting reads: the feeds with a message a read could lease now; not an
// empty one, not one whose messages are all leased, not a pushed destination, not a
// deleted feed.
TEST_F(FeedsPgTest, TheReadyFeedsAreThoseWithAMessageToLease) {
  const int64_t feed = CreateFeed();
  const int64_t empty = CreateFeed();
  const int64_t leased = CreateFeed();
  const int64_t gone = CreateFeed();
  const int64_t hook = CreateDestination(testing::TestDestination());
  for (int i = 0; i < 3; ++i) Publish();
  db_.Exec("DELETE FROM webhookd.delivery_queue WHERE destination_id = " + N(empty));
  ASSERT_EQ(Lease(leased, 10).messages.size(), 3u);
  ASSERT_TRUE(store_.DeleteDestination(gone, Scope::All()));
  const std::vector<int64_t> all = {feed, empty, leased, gone, hook, 999999};
  auto ready = store_.ReadyFeeds(all);
  ASSERT_TRUE(ready) << ready.error().message;
  EXPECT_EQ(*ready, std::vector<int64_t>{feed});
  // Once its messages are leased, it is not ready either.
  ASSERT_EQ(Lease(feed, 10).messages.size(), 3u);
  ready = store_.ReadyFeeds(all);
  ASSERT_TRUE(ready);
  EXPECT_TRUE(ready->empty());
}

// One feed's counts (GET …/messages/counts): waiting and leased; an acked message is
// neither; a pushed destination's queue counts only what fell back to its feed.
TEST_F(FeedsPgTest, AFeedsCountsAreItsWaitingAndLeasedMessages) {
  const int64_t feed = CreateFeed();
  const int64_t hook = CreateDestination(testing::TestDestination());
  for (int i = 0; i < 5; ++i) Publish();
  const FeedLease leased = Lease(feed, 2);
  ASSERT_EQ(leased.messages.size(), 2u);
  Ack(leased.messages[0]);
  auto counts = store_.CountFeed(feed, true);
  ASSERT_TRUE(counts) << counts.error().message;
  EXPECT_EQ(counts->waiting, 3);
  EXPECT_EQ(counts->leased, 1);
  // The pushed destination has five queued, none fallen back; then one falls back.
  counts = store_.CountFeed(hook, false);
  ASSERT_TRUE(counts);
  EXPECT_EQ(counts->waiting, 0);
  db_.Exec(
      "UPDATE webhookd.delivery_queue SET feed_at = now() WHERE id = (SELECT min(id) FROM"
      " webhookd.delivery_queue WHERE destination_id = " +
      N(hook) + ")");
  counts = store_.CountFeed(hook, false);
  ASSERT_TRUE(counts);
  EXPECT_EQ(counts->waiting, 1);
  EXPECT_EQ(counts->leased, 0);
}

TEST_F(FeedsPgTest, AReadLeasesTheOldestFirstAndASecondReadGetsTheRest) {
  const int64_t feed = CreateFeed();
  std::vector<int64_t> events;
  for (int i = 0; i < 5; ++i) events.push_back(Publish());
  const FeedLease first = Lease(feed, 3, 30s);
  ASSERT_EQ(first.messages.size(), 3u);
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(first.messages[i].event_id, events[i]);
  EXPECT_GT(first.lease_until, SystemClock().Now() + 20s);
  EXPECT_EQ(first.messages[0].secrets.front(), "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
  const FeedLease second = Lease(feed, 100);
  ASSERT_EQ(second.messages.size(), 2u);
  EXPECT_EQ(second.messages[0].event_id, events[3]);
  EXPECT_TRUE(Lease(feed, 100).messages.empty());
}

TEST_F(FeedsPgTest, TwoReadsAtOnceNeverShareAMessage) {
  const int64_t feed = CreateFeed();
  for (int i = 0; i < 300; ++i) Publish();
  std::mutex mu;
  std::vector<int64_t> all;
  int reads[2] = {0, 0};
  std::latch start(2);
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&, t] {
      start.arrive_and_wait();
      for (int round = 0; round < 1000; ++round) {
        auto r = store_.LeaseFeed(feed, 7, 1h);
        ASSERT_TRUE(r) << r.error().message;
        if (r->messages.empty()) break;
        std::lock_guard lock(mu);
        ++reads[t];
        for (const auto& m : r->messages) all.push_back(m.delivery_id);
      }
    });
  }
  for (auto& t : threads) t.join();
  const std::set<int64_t> unique(all.begin(), all.end());
  EXPECT_EQ(all.size(), 300u);
  EXPECT_EQ(unique.size(), 300u);
  EXPECT_GT(reads[0] + reads[1], 0);
}

TEST_F(FeedsPgTest, AFifoFeedHandsOutEachKeysHeadAloneUntilItIsAcked) {
  const int64_t feed = CreateFeed("fifo");
  const int64_t a1 = Publish("a");
  const int64_t a2 = Publish("a");
  const int64_t b1 = Publish("b");
  const FeedLease first = Lease(feed, 100);
  ASSERT_EQ(first.messages.size(), 2u);
  std::set<int64_t> got;
  for (const auto& m : first.messages) got.insert(m.event_id);
  EXPECT_EQ(got, (std::set<int64_t>{a1, b1}));
  EXPECT_TRUE(Lease(feed, 100).messages.empty());  // a2 waits behind a1
  for (const auto& m : first.messages) {
    if (m.event_id == a1) {
      EXPECT_EQ(m.ordering_key, std::optional<std::string>("a"));
      EXPECT_EQ(Ack(m).size(), 1u);
      EXPECT_TRUE(Ack(m).empty());  // twice: the second changes nothing
    }
  }
  const FeedLease next = Lease(feed, 100);
  ASSERT_EQ(next.messages.size(), 1u);
  EXPECT_EQ(next.messages[0].event_id, a2);
}

TEST_F(FeedsPgTest, AnEndedLeaseIsFoundForItsFailedAttemptAndNotSilentlyRequeued) {
  const int64_t feed = CreateFeed();
  const int64_t event = Publish();
  const FeedLease lease = Lease(feed, 10, 1ms);
  ASSERT_EQ(lease.messages.size(), 1u);
  // Bounded: the lease of a millisecond ends long before this.
  for (int i = 0; i < 200 && db_.Scalar("SELECT count(*) FROM webhookd.delivery_queue WHERE "
                                        "lease_until < now()") != "1";
       ++i) {
    std::this_thread::sleep_for(5ms);
  }
  auto requeued = store_.RequeueExpiredLeases();
  ASSERT_TRUE(requeued);
  EXPECT_EQ(*requeued, 0);  // the sweeper leaves it for its failed attempt
  auto expired = store_.ExpiredFeedLeases(100);
  ASSERT_TRUE(expired) << expired.error().message;
  ASSERT_EQ(expired->size(), 1u);
  EXPECT_EQ((*expired)[0].event_id, event);
  EXPECT_EQ((*expired)[0].destination_id, feed);
  EXPECT_EQ((*expired)[0].lease_token, lease.messages[0].claim_token);
  // What the worker writes for it: a failed attempt, then the message waits again.
  AttemptRecord r = testing::RecordFor(lease.messages[0], DeliveryStatus::kPending, std::nullopt,
                                       Outcome::kRetryable);
  r.error = "lease expired";
  EXPECT_EQ(Record({r}).size(), 1u);
  EXPECT_EQ(db_.Scalar("SELECT error FROM webhookd.attempts WHERE delivery_id = " +
                       N(lease.messages[0].delivery_id)),
            "lease expired");
  // A feed opens no circuit, whatever fails.
  EXPECT_EQ(db_.Scalar("SELECT circuit || consecutive_failures FROM webhookd.destinations WHERE "
                       "id = " +
                       N(feed)),
            "closed0");
  EXPECT_EQ(Lease(feed, 10).messages.size(), 1u);
}

// Measured in shared buffers (deterministic, unlike time): a read walks the index that
// begins with its destination, so 100,000 other destinations with a message waiting each
// cost it nothing.
TEST_F(FeedsPgTest, AReadBesideAHundredThousandOtherDestinationsReadsOnlyItsOwnRows) {
  // The others come first, so that any walk of the queue in destination order would meet
  // their rows before the feed's.
  db_.Exec(
      "INSERT INTO destinations (url, secret, event_types) SELECT 'feed:', "
      "'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', ARRAY['other.*'] FROM generate_series(1, "
      "100000)");
  db_.Exec("INSERT INTO events (type, payload) VALUES ('other.created', '{}')");
  db_.Exec(
      "INSERT INTO deliveries (event_id, destination_id) SELECT (SELECT max(id) FROM events), "
      "t.id FROM destinations t");
  Destination d = testing::TestDestination({"order.*"});
  d.url = "feed:";
  const int64_t feed = CreateDestination(d);
  for (int i = 0; i < 20; ++i) Publish();
  {
    auto c = testing::TestDatabase::Connect(db_.url());
    pqxx::nontransaction(*c).exec(
        "VACUUM ANALYZE destinations, deliveries, delivery_queue, events");
  }
  ASSERT_EQ(db_.Scalar("SELECT count(*) FROM delivery_queue"), "100020");
  auto c = testing::TestDatabase::Connect(db_.url());
  pqxx::nontransaction(*c).exec("SET stats_fetch_consistency = none");
  pqxx::nontransaction(*c).exec("PREPARE lease(bigint, int, bigint, bigint) AS " +
                                std::string(pg::sql::kLeaseFeed.sql));
  const auto read = [&](int limit) {
    pqxx::nontransaction tx(*c);
    tx.exec("SELECT pg_stat_force_next_flush()");
    const int64_t before =
        tx.exec1("SELECT blks_hit FROM pg_stat_database WHERE datname = current_database()")[0]
            .as<int64_t>();
    const auto rows = tx.exec("EXECUTE lease(" + N(feed) + ", " + N(limit) + ", 60000000, 7)");
    tx.exec("SELECT 1");
    tx.exec("SELECT pg_stat_force_next_flush()");
    const int64_t after =
        tx.exec1("SELECT blks_hit FROM pg_stat_database WHERE datname = current_database()")[0]
            .as<int64_t>();
    EXPECT_EQ(rows.size(), static_cast<size_t>(limit));
    return after - before;
  };
  read(1);  // plans the statement
  const int64_t cost = read(10);
  // About 280 here; a read that walked the queue in destination order past the others'
  // rows touched about 1,800.
  EXPECT_LT(cost, 1000) << "a read of 10 touched " << cost << " buffers";
  RecordProperty("feed_read_buffers", static_cast<int>(cost));
  std::printf("a read of 10 beside 100,000 destinations touched %lld shared buffers\n",
              static_cast<long long>(cost));
}

}  // namespace
}  // namespace webhookd::feeds_pgtest
