// The gauges fold the queue's counters (store/pg/schema/delivery_gauges.sql,
// count_queue_changes.sql); after each kind of write they must equal a count of the
// deliveries as the API shows them.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "store/pg/pg_store.h"
#include "store/pg/statements.h"
#include "tests/testing/pg_fixture.h"

namespace webhookd::delivery_counts_pgtest {
namespace {

using testing::N;

class DeliveryCountsPgTest : public testing::PgTest {
 protected:
  int64_t Count(const std::string& where) {
    return std::stoll(db_.Scalar("SELECT count(*) FROM delivery_rows WHERE " + where));
  }

  // The gauges as served, beside the same figures counted from the rows.
  void ExpectGaugesMatchRows(const std::string& after) {
    SCOPED_TRACE(after);
    auto g = store_.CountDeliveries();
    ASSERT_TRUE(g) << g.error().message;
    EXPECT_EQ(g->pending, Count("status = 'pending'"));
    EXPECT_EQ(g->in_flight, Count("status = 'in_flight'"));
    // To the minute: the rows set back here are 25 hours old, far from the boundary.
    EXPECT_EQ(
        g->retrying_over_24h,
        Count("status IN ('pending', 'in_flight') AND created_at < now() - interval '24 hours'"));
  }

  void Ingest(int n) {
    for (int i = 0; i < n; ++i) {
      auto r = store_.InsertEvent(NewEvent{"order.created", "{}", std::nullopt}, std::nullopt);
      ASSERT_TRUE(r) << r.error().message;
    }
  }
};

TEST_F(DeliveryCountsPgTest, EveryWriteKeepsTheGaugesEqualToTheRows) {
  const int64_t a = CreateDestination(testing::TestDestination({"order.*"}));
  const int64_t b = CreateDestination(testing::TestDestination({"order.*"}));
  ExpectGaugesMatchRows("nothing yet");
  Ingest(6);  // 12 pending
  ExpectGaugesMatchRows("ingest");
  ASSERT_EQ(store_.CountDeliveries()->pending, 12);

  auto claimed = Claim(5);
  ASSERT_EQ(claimed.size(), 5u);
  ExpectGaugesMatchRows("a claim");

  auto dead =
      testing::RecordFor(claimed[2], DeliveryStatus::kDeadLettered, 410, Outcome::kPermanent);
  dead.dead_letter_reason = DeadLetterReason::kPermanentFailure;
  auto retry = testing::RecordFor(claimed[1], DeliveryStatus::kPending, 503, Outcome::kRetryable);
  Record({testing::RecordFor(claimed[0], DeliveryStatus::kSucceeded, 200, Outcome::kSuccess), retry,
          dead});
  ExpectGaugesMatchRows("a success, a retry and a dead letter");

  auto replayed = store_.ReplayDeadLetters(DeadLetterFilter{}, Scope::All(), std::nullopt);
  ASSERT_TRUE(replayed) << replayed.error().message;
  ASSERT_EQ(replayed->replayed, 1);
  ExpectGaugesMatchRows("a replay");

  db_.Exec(
      "UPDATE delivery_queue SET lease_until = now() - interval '1 second'"
      " WHERE claim_token IS NOT NULL");
  auto requeued = store_.RequeueExpiredLeases();
  ASSERT_TRUE(requeued) << requeued.error().message;
  ASSERT_EQ(*requeued, 2);
  ExpectGaugesMatchRows("the lease sweep");

  // The queue keeps its delivery's creation time: both are set back.
  db_.Exec(
      "WITH x AS (SELECT id FROM delivery_rows WHERE status = 'pending' ORDER BY id LIMIT 3),"
      " q AS (UPDATE delivery_queue SET created_at = now() - interval '25 hours'"
      " WHERE id IN (SELECT id FROM x))"
      " UPDATE deliveries SET created_at = now() - interval '25 hours'"
      " WHERE id IN (SELECT id FROM x)");
  ExpectGaugesMatchRows("three set back 25 hours");
  ASSERT_EQ(store_.CountDeliveries()->retrying_over_24h, 3);

  db_.Exec("SELECT webhookd.publish('order.created', '{}')");
  ExpectGaugesMatchRows("publish()");

  ASSERT_TRUE(store_.DeleteDestination(a, Scope::All()));  // its pending ones are cancelled
  ExpectGaugesMatchRows("a destination deleted");
  ASSERT_GT(store_.CountDeliveries()->pending, 0);  // b's are still there
  EXPECT_GT(Count("status = 'cancelled' AND destination_id = " + N(a)), 0);
  EXPECT_GT(Count("status IN ('pending', 'in_flight') AND destination_id = " + N(b)), 0);
}

// The migrator fills the counters from the queue with every change of the definitions
// (store/pg/sql/scripts/recount_queue.sql): counters lost or wrong are made right.
TEST_F(DeliveryCountsPgTest, TheRecountMakesLostCountersRight) {
  CreateDestination(testing::TestDestination({"order.*"}));
  Ingest(4);
  ASSERT_EQ(Claim(1).size(), 1u);
  db_.Exec("ALTER TABLE delivery_queue DISABLE TRIGGER USER");
  db_.Exec("DELETE FROM queue_counts; DELETE FROM queue_counts_by_minute");
  db_.Exec("ALTER TABLE delivery_queue ENABLE TRIGGER USER");
  ASSERT_EQ(store_.CountDeliveries()->pending, 0);  // what was lost
  db_.Exec(std::string(pg::sql::kRecountQueue.sql));
  ExpectGaugesMatchRows("the recount");
  EXPECT_EQ(store_.CountDeliveries()->pending, 3);
  EXPECT_EQ(store_.CountDeliveries()->in_flight, 1);

  // A truncate takes the counts with the rows (the history keeps its own status).
  db_.Exec("TRUNCATE delivery_queue");
  EXPECT_EQ(store_.CountDeliveries()->pending, 0);
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM queue_counts_by_minute"), "0");
}

}  // namespace
}  // namespace webhookd::delivery_counts_pgtest
