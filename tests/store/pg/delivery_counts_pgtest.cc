// The gauges come from counters that every statement changing deliveries keeps
// (store/pg/schema/count_*_deliveries.sql); after each kind of write they must equal a count of the
// rows.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "store/pg/pg_store.h"
#include "tests/testing/pg_fixture.h"

namespace webhookd {
namespace {

using testing::N;

class DeliveryCountsPgTest : public testing::PgTest {
 protected:
  int64_t Count(const std::string& where) {
    return std::stoll(db_.Scalar("SELECT count(*) FROM deliveries WHERE " + where));
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
      "UPDATE deliveries SET lease_until = now() - interval '1 second'"
      " WHERE status = 'in_flight'");
  auto requeued = store_.RequeueExpiredLeases();
  ASSERT_TRUE(requeued) << requeued.error().message;
  ASSERT_EQ(*requeued, 2);
  ExpectGaugesMatchRows("the lease sweep");

  db_.Exec(
      "UPDATE deliveries SET created_at = now() - interval '25 hours'"
      " WHERE id IN (SELECT id FROM deliveries WHERE status = 'pending' ORDER BY id LIMIT 3)");
  ExpectGaugesMatchRows("three set back 25 hours");
  ASSERT_EQ(store_.CountDeliveries()->retrying_over_24h, 3);

  db_.Exec("SELECT webhookd.publish('order.created', '{}')");
  ExpectGaugesMatchRows("publish()");

  ASSERT_TRUE(store_.DeleteDestination(a, Scope::All()));  // its pending ones are cancelled
  ExpectGaugesMatchRows("a destination deleted");

  db_.Exec(
      "DELETE FROM attempts; DELETE FROM dead_letters;"
      " DELETE FROM deliveries WHERE destination_id = " +
      N(b) + " AND id % 2 = 0");
  ExpectGaugesMatchRows("rows deleted");
  ExpectGaugesMatchRows("read again after the fold");
}

TEST_F(DeliveryCountsPgTest, TheFoldKeepsOneRowPerMinuteThatStillCounts) {
  CreateDestination(testing::TestDestination({"order.*"}));
  Ingest(20);
  Claim(10);
  ASSERT_GT(std::stoll(db_.Scalar("SELECT count(*) FROM delivery_counts")), 2);
  ASSERT_TRUE(store_.CountDeliveries());
  // Everything here was created within a minute or two: one row a minute at most.
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM delivery_counts"), "0");
  EXPECT_LE(std::stoll(db_.Scalar("SELECT count(*) FROM delivery_counts_by_minute")), 2);
  db_.Exec("DELETE FROM deliveries WHERE status = 'pending'");
  db_.Exec("UPDATE deliveries SET status = 'cancelled', lease_until = NULL, claim_token = NULL");
  ASSERT_TRUE(store_.CountDeliveries());
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM delivery_counts"), "0");
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM delivery_counts_by_minute"), "0");
}

}  // namespace
}  // namespace webhookd
