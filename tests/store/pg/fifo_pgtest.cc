// The fifo rule on a real PostgreSQL (store/pg/schema/fifo_due_heads.sql): on a fifo
// destination only the oldest unfinished delivery of each ordering key is ever claimed.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <pqxx/pqxx>
#include <string>
#include <vector>

#include "tests/testing/pg_fixture.h"

namespace webhookd::fifo_pgtest {
namespace {

using namespace std::chrono_literals;
using testing::N;
using testing::RecordFor;

class FifoPgTest : public testing::PgTest {
 protected:
  // A destination; `ordering` and `on_dead_letter` as the API would set them.
  int64_t Destination(const std::string& ordering = "fifo",
                      const std::string& on_dead_letter = "continue") {
    const int64_t id = CreateDestination(testing::TestDestination());
    db_.Exec("UPDATE webhookd.destinations SET ordering = '" + ordering + "', on_dead_letter = '" +
             on_dead_letter + "' WHERE id = " + N(id));
    return id;
  }

  // An event with `key` (none when empty) through publish(); returns its delivery ids in
  // destination order.
  int64_t Publish(const std::string& key = "") {
    const std::string event =
        db_.Scalar("SELECT webhookd.publish('order.updated', '{}'" +
                   (key.empty() ? std::string() : ", ordering_key => '" + key + "'") + ")");
    return std::stoll(event.substr(4));
  }

  // The delivery of event `event` to `destination`.
  int64_t DeliveryOf(int64_t event, int64_t destination) {
    return std::stoll(db_.Scalar("SELECT id FROM webhookd.delivery_rows dr WHERE event_id = " +
                                 N(event) + " AND destination_id = " + N(destination)));
  }

  // The events of what a claim of up to `limit` takes, sorted.
  std::vector<int64_t> ClaimEvents(int limit = 100, std::vector<ClaimedDelivery>* out = nullptr) {
    std::vector<ClaimedDelivery> claimed = Claim(limit);
    std::vector<int64_t> events;
    for (const auto& c : claimed) events.push_back(c.event_id);
    std::sort(events.begin(), events.end());
    if (out != nullptr) *out = std::move(claimed);
    return events;
  }

  void Succeed(const ClaimedDelivery& c) {
    Record({RecordFor(c, DeliveryStatus::kSucceeded, 200, Outcome::kSuccess)});
  }

  void DeadLetter(const ClaimedDelivery& c) {
    AttemptRecord r = RecordFor(c, DeliveryStatus::kDeadLettered, 400, Outcome::kPermanent);
    r.dead_letter_reason = DeadLetterReason::kPermanentFailure;
    Record({r});
  }

  int64_t DeadLetterIdOf(int64_t delivery) {
    return std::stoll(db_.Scalar("SELECT id FROM webhookd.dead_letters WHERE delivery_id = " +
                                 N(delivery) + " ORDER BY id DESC LIMIT 1"));
  }
};

TEST_F(FifoPgTest, OnlyEachKeysHeadIsClaimedAndTheNextGoesWhenItFinishes) {
  Destination();
  const int64_t a1 = Publish("A"), a2 = Publish("A"), b1 = Publish("B"), a3 = Publish("A");
  const int64_t b2 = Publish("B");
  std::vector<ClaimedDelivery> claimed;
  EXPECT_EQ(ClaimEvents(100, &claimed), (std::vector<int64_t>{a1, b1}));
  EXPECT_EQ(ClaimEvents(), std::vector<int64_t>{}) << "the heads are in flight";
  for (const auto& c : claimed) {
    if (c.event_id == a1) Succeed(c);
  }
  std::vector<ClaimedDelivery> next;
  EXPECT_EQ(ClaimEvents(100, &next), std::vector<int64_t>{a2});
  Succeed(next[0]);
  for (const auto& c : claimed) {
    if (c.event_id == b1) Succeed(c);
  }
  EXPECT_EQ(ClaimEvents(), (std::vector<int64_t>{a3, b2}));
}

TEST_F(FifoPgTest, EventsWithoutAKeyAreOneSequenceAndPlainDestinationsAreUnaffected) {
  const int64_t fifo = Destination();
  const int64_t plain = Destination("none");
  const int64_t e1 = Publish(), e2 = Publish(), e3 = Publish("A");
  std::vector<ClaimedDelivery> claimed;
  ClaimEvents(100, &claimed);
  std::vector<std::pair<int64_t, int64_t>> got;  // (destination, event)
  for (const auto& c : claimed) got.emplace_back(c.destination_id, c.event_id);
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, (std::vector<std::pair<int64_t, int64_t>>{
                     {fifo, e1}, {fifo, e3}, {plain, e1}, {plain, e2}, {plain, e3}}));
  // Every delivery has its event's key; only the fifo destination's are queued marked for
  // the rule.
  EXPECT_EQ(db_.Scalar("SELECT string_agg(coalesce(ordering_key, '-') || ':' || fifo, ',' ORDER "
                       "BY id) FROM webhookd.delivery_queue WHERE destination_id = " +
                       N(fifo)),
            "-:true,-:true,A:true");
  EXPECT_EQ(db_.Scalar("SELECT string_agg(coalesce(ordering_key, '-') || ':' || fifo, ',' ORDER "
                       "BY id) FROM webhookd.delivery_queue WHERE destination_id = " +
                       N(plain)),
            "-:false,-:false,A:false");
}

TEST_F(FifoPgTest, AReplayedEarlierEventGoesBeforeTheKeysLaterOnes) {
  const int64_t dst = Destination();
  const int64_t a1 = Publish("A"), a2 = Publish("A"), a3 = Publish("A");
  std::vector<ClaimedDelivery> c;
  ASSERT_EQ(ClaimEvents(100, &c), std::vector<int64_t>{a1});
  DeadLetter(c[0]);  // continue: the next goes
  ASSERT_EQ(ClaimEvents(100, &c), std::vector<int64_t>{a2});
  auto replayed = store_.ReplayDeadLetter(DeadLetterIdOf(DeliveryOf(a1, dst)), Scope::All());
  ASSERT_TRUE(replayed) << replayed.error().message;
  // a2 is in flight: a1, now the oldest unfinished, waits for it, and a3 waits for a1.
  EXPECT_EQ(ClaimEvents(), std::vector<int64_t>{});
  Succeed(c[0]);
  EXPECT_EQ(ClaimEvents(100, &c), std::vector<int64_t>{a1});
  Succeed(c[0]);
  EXPECT_EQ(ClaimEvents(), std::vector<int64_t>{a3});
}

TEST_F(FifoPgTest, UnderBlockADeadLetterHoldsItsKeyUntilDismissedOrReplayed) {
  const int64_t dst = Destination("fifo", "block");
  const int64_t a1 = Publish("A"), a2 = Publish("A"), b1 = Publish("B");
  std::vector<ClaimedDelivery> c;
  ASSERT_EQ(ClaimEvents(100, &c), (std::vector<int64_t>{a1, b1}));
  for (const auto& x : c) x.event_id == a1 ? DeadLetter(x) : Succeed(x);
  EXPECT_EQ(ClaimEvents(), std::vector<int64_t>{}) << "a2 waits behind a1's dead letter";
  // Replayed: a1 is the head again and goes first.
  const int64_t first = DeadLetterIdOf(DeliveryOf(a1, dst));
  ASSERT_TRUE(store_.ReplayDeadLetter(first, Scope::All()));
  ASSERT_EQ(ClaimEvents(100, &c), std::vector<int64_t>{a1});
  DeadLetter(c[0]);
  EXPECT_EQ(ClaimEvents(), std::vector<int64_t>{});
  // Dismissed: the key goes on without it.
  const int64_t second = DeadLetterIdOf(DeliveryOf(a1, dst));
  auto dismissed = store_.DismissDeadLetter(second, Scope::All());
  ASSERT_TRUE(dismissed) << dismissed.error().message;
  EXPECT_TRUE(dismissed->dismissed_at);
  EXPECT_EQ(ClaimEvents(), std::vector<int64_t>{a2});
  // Dismissed once: not again, and never replayed.
  EXPECT_EQ(store_.DismissDeadLetter(second, Scope::All()).error().kind, ErrorKind::kConflict);
  EXPECT_EQ(store_.ReplayDeadLetter(second, Scope::All()).error().kind, ErrorKind::kConflict);
  EXPECT_EQ(store_.DismissDeadLetter(first, Scope::All()).error().kind, ErrorKind::kConflict)
      << "a replayed one is not dismissed";
  EXPECT_EQ(store_.DismissDeadLetter(second, Scope::Tenant("other")).error().kind,
            ErrorKind::kNotFound);
}

TEST_F(FifoPgTest, AnOpenCircuitSkipsTheHeadsAlone) {
  const int64_t dst = Destination();
  const int64_t a1 = Publish("A");
  Publish("A");
  const int64_t b1 = Publish("B");
  db_.Exec(
      "UPDATE webhookd.destinations SET circuit = 'open', next_probe_at = now() + "
      "interval '1 hour' WHERE id = " +
      N(dst));
  std::vector<ClaimedDelivery> c;
  EXPECT_EQ(ClaimEvents(100, &c), (std::vector<int64_t>{a1, b1}));
  for (const auto& x : c) EXPECT_EQ(x.kind, ClaimKind::kSkip);
}

TEST_F(FifoPgTest, ADisabledFifoDestinationWaitsAndGoesOnInOrderWhenEnabled) {
  const int64_t dst = Destination();
  const int64_t a1 = Publish("A");
  Publish("A");
  DestinationFields off;
  off.enabled = false;
  ASSERT_TRUE(store_.UpdateDestination(dst, off, Scope::All()));
  EXPECT_EQ(ClaimEvents(), std::vector<int64_t>{});
  DestinationFields on;
  on.enabled = true;
  ASSERT_TRUE(store_.UpdateDestination(dst, on, Scope::All()));
  EXPECT_EQ(ClaimEvents(), std::vector<int64_t>{a1});
}

TEST_F(FifoPgTest, AHeadWhoseWorkerDiedIsClaimedAgainAfterItsLease) {
  Destination();
  const int64_t a1 = Publish("A");
  Publish("A");
  auto first = store_.ClaimDue(10, 1ms, 16);
  ASSERT_TRUE(first);
  ASSERT_EQ(first->deliveries.size(), 1u);
  std::this_thread::sleep_for(20ms);
  auto swept = store_.RequeueExpiredLeases();
  ASSERT_TRUE(swept);
  EXPECT_EQ(*swept, 1);
  EXPECT_EQ(ClaimEvents(), std::vector<int64_t>{a1}) << "the head again, never the one behind";
}

TEST_F(FifoPgTest, MadeFifoWhileDeliveriesWaitAndBackToPlain) {
  const int64_t dst = Destination("none");
  const int64_t a1 = Publish("A"), a2 = Publish("A"), b1 = Publish("B");
  db_.Exec("UPDATE webhookd.destinations SET ordering = 'fifo' WHERE id = " + N(dst));
  std::vector<ClaimedDelivery> c;
  EXPECT_EQ(ClaimEvents(100, &c), (std::vector<int64_t>{a1, b1}));
  for (const auto& x : c) Succeed(x);
  db_.Exec("UPDATE webhookd.destinations SET ordering = 'none' WHERE id = " + N(dst));
  const int64_t a3 = Publish("A");
  EXPECT_EQ(ClaimEvents(), (std::vector<int64_t>{a2, a3}));
}

TEST_F(FifoPgTest, ALaterDeliveryInFlightHoldsAnEarlierOneThatCommittedAfterIt) {
  // Two posts of one key at the same moment: whichever the claim saw first is in flight;
  // the other, though older, waits for it rather than go beside it.
  const int64_t dst = Destination();
  const int64_t a1 = Publish("A"), a2 = Publish("A");
  db_.Exec(
      "UPDATE webhookd.delivery_queue SET lease_until = now() + interval '1 hour',"
      " claim_token = 1 WHERE id = " +
      N(DeliveryOf(a2, dst)));
  EXPECT_EQ(ClaimEvents(), std::vector<int64_t>{});
  db_.Exec(
      "DELETE FROM webhookd.delivery_queue WHERE id = " + N(DeliveryOf(a2, dst)) +
      "; UPDATE webhookd.deliveries SET status = 'succeeded' WHERE id = " + N(DeliveryOf(a2, dst)));
  EXPECT_EQ(ClaimEvents(), std::vector<int64_t>{a1});
}

TEST_F(FifoPgTest, HeadsAreReadWithTheClaimsSnapshotNotALaterOne) {
  // The claim reads a head's attempt count in its own snapshot: a retry that became due
  // after that snapshot was taken must not be offered by a later one, or it goes out
  // under the attempt number it already failed with and its outcome cannot be written.
  // A cursor holds a snapshot while what it calls runs later, as a claim's statement
  // does while another worker writes an outcome.
  const int64_t dst = Destination();
  const int64_t a1 = Publish("A");
  ASSERT_EQ(ClaimEvents(), std::vector<int64_t>{a1});
  pqxx::connection claim_conn(db_.url());
  pqxx::work claim(claim_conn);
  claim.exec("DECLARE heads CURSOR FOR SELECT id FROM webhookd.fifo_due_heads(" + N(dst) +
             ", false, 10)");
  // The outcome of a1's first attempt: due again at once.
  db_.Exec(
      "UPDATE webhookd.delivery_queue SET claim_token = NULL, lease_until = NULL,"
      " next_attempt_at = now() - interval '1 second' WHERE id = " +
      N(DeliveryOf(a1, dst)) +
      "; UPDATE webhookd.deliveries SET attempt_count = 1 WHERE id = " + N(DeliveryOf(a1, dst)));
  EXPECT_EQ(claim.exec("FETCH ALL FROM heads").size(), 0u)
      << "a head the claim's snapshot has in flight";
  claim.abort();
  std::vector<ClaimedDelivery> again;
  EXPECT_EQ(ClaimEvents(100, &again), std::vector<int64_t>{a1});
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].attempt_count, 1);
}

TEST_F(FifoPgTest, KeysTakeTurnsFromWhereTheLastClaimStopped) {
  // Each claim begins after the key of the last head the one before it took, and wraps:
  // a key that sorts first is not served again while others wait.
  Destination();
  std::vector<int64_t> a, b, c, d;
  for (int i = 0; i < 2; ++i) {
    a.push_back(Publish("A"));
    b.push_back(Publish("B"));
    c.push_back(Publish("C"));
    d.push_back(Publish("D"));
  }
  std::vector<int64_t> order;
  for (int round = 0; round < 4; ++round) {
    std::vector<ClaimedDelivery> claimed;
    const std::vector<int64_t> events = ClaimEvents(2, &claimed);
    order.insert(order.end(), events.begin(), events.end());
    for (const auto& x : claimed) Succeed(x);
  }
  EXPECT_EQ(order, (std::vector<int64_t>{a[0], b[0], c[0], d[0], a[1], b[1], c[1], d[1]}));
  EXPECT_EQ(ClaimEvents(), std::vector<int64_t>{});
}

TEST_F(FifoPgTest, BlockedByIsTheOldestUnfinishedOfItsKeyBeforeItElseOneInFlight) {
  // fifo_blocked_by against the rule written out plainly, over every mix of three states
  // for the five deliveries of one key (and one of another key in flight throughout).
  const int64_t dst = Destination();
  std::vector<int64_t> ids;
  for (int i = 0; i < 5; ++i) ids.push_back(DeliveryOf(Publish("A"), dst));
  const int64_t other = DeliveryOf(Publish("B"), dst);
  db_.Exec(
      "UPDATE webhookd.delivery_queue SET lease_until = now() + interval '1 hour',"
      " claim_token = 1 WHERE id = " +
      N(other));
  const std::vector<std::string> states = {"pending", "in_flight", "succeeded"};
  // One connection for the 243 mixes: a new backend per statement made this test take
  // minutes on a loaded machine.
  auto conn = testing::TestDatabase::Connect(db_.url());
  int checked = 0;
  for (int mix = 0; mix < 243; ++mix) {  // 3^5
    int m = mix;
    {
      pqxx::work tx(*conn);
      for (int64_t id : ids) {
        const std::string& state = states[m % 3];
        m /= 3;
        // Pending and in flight: a queue row, with a claim token while in flight;
        // succeeded: none, and the history says so.
        const bool queued = state != "succeeded", in_flight = state == "in_flight";
        tx.exec("DELETE FROM webhookd.delivery_queue WHERE id = " + N(id));
        if (queued) {
          tx.exec(
              "INSERT INTO webhookd.delivery_queue (id, destination_id, next_attempt_at,"
              " lease_until, claim_token, fifo, ordering_key, created_at)"
              " SELECT id, destination_id, now(), " +
              std::string(in_flight ? "now() + interval '1 hour', 1" : "NULL, NULL") +
              ", true, ordering_key, created_at FROM webhookd.deliveries WHERE id = " + N(id));
        }
        tx.exec("UPDATE webhookd.deliveries SET status = '" +
                std::string(queued ? "pending" : "succeeded") + "' WHERE id = " + N(id));
      }
      tx.commit();
    }
    pqxx::nontransaction read(*conn);
    const std::string got =
        read.exec1(
                "SELECT string_agg(d.id || ':' || coalesce(d.blocked_by::text, '-'), ',' ORDER BY "
                "d.id) FROM webhookd.delivery_rows d WHERE d.ordering_key = 'A'")[0]
            .c_str();
    const std::string want =
        read.exec1(
                "SELECT string_agg(d.id || ':' || coalesce(CASE WHEN d.status = 'pending' THEN "
                "coalesce((SELECT min(x.id) FROM webhookd.delivery_rows x WHERE x.ordering_key = "
                "'A' "
                "AND "
                "x.status IN ('pending', 'in_flight') AND x.id < d.id), (SELECT min(x.id) FROM "
                "webhookd.delivery_rows x WHERE x.ordering_key = 'A' AND x.status = 'in_flight')) "
                "END::text, '-'), ',' ORDER BY d.id) FROM webhookd.delivery_rows d WHERE "
                "d.ordering_key = "
                "'A'")[0]
            .c_str();
    read.commit();
    EXPECT_EQ(got, want) << "mix " << mix;
    ++checked;
  }
  EXPECT_EQ(checked, 243);
}

}  // namespace
}  // namespace webhookd::fifo_pgtest
