// Secret rotation on a real PostgreSQL: the replaced secret keeps signing for its grace
// period (the claim hands the worker every valid secret, newest first), at most five sign
// at once, a zero grace ends the earlier ones, and expired ones are erased.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>

#include "tests/testing/pg_fixture.h"

namespace webhookd::rotation_pgtest {
namespace {

using namespace std::chrono_literals;
using ::testing::ElementsAre;
using testing::N;

constexpr const char* kFirst = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

std::string Secret(int n) {
  // 24 bytes of base64, distinct per n.
  std::string s = "whsec_" + std::string(31, 'A') + static_cast<char>('A' + n);
  return s;
}

class RotationPgTest : public testing::PgTest {
 protected:
  std::vector<std::string> ClaimedSecrets(int64_t destination) {
    auto r = store_.InsertEvent(NewEvent{"t", "{}", destination}, std::nullopt);
    EXPECT_TRUE(r) << r.error().message;
    auto claimed = Claim(10);
    EXPECT_EQ(claimed.size(), 1u);
    return claimed.empty() ? std::vector<std::string>{} : claimed[0].secrets;
  }
};

TEST_F(RotationPgTest, TheReplacedSecretSignsUntilItsGraceEnds) {
  const int64_t dst = CreateDestination(testing::TestDestination());
  auto until = store_.RotateSecret(dst, Secret(1), 1h, Scope::All());
  ASSERT_TRUE(until) << until.error().message;
  const double hours = std::chrono::duration<double>(*until - SystemClock().Now()).count() / 3600.0;
  EXPECT_NEAR(hours, 1.0, 0.01);
  EXPECT_THAT(ClaimedSecrets(dst), ElementsAre(Secret(1), kFirst));
  EXPECT_EQ(store_.GetDestination(dst, Scope::All())->secret, Secret(1));

  // Once its grace has passed it no longer signs, and the next rotation erases it.
  db_.Exec("UPDATE destination_secrets SET expires_at = now() - interval '1 second'");
  EXPECT_THAT(ClaimedSecrets(dst), ElementsAre(Secret(1)));
  ASSERT_TRUE(store_.RotateSecret(dst, Secret(2), 1h, Scope::All()));
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM destination_secrets WHERE secret = '" +
                       std::string(kFirst) + "'"),
            "0");
  EXPECT_THAT(ClaimedSecrets(dst), ElementsAre(Secret(2), Secret(1)));
}

TEST_F(RotationPgTest, AtMostFiveSignAtOnceAndAZeroGraceEndsTheEarlierOnes) {
  const int64_t dst = CreateDestination(testing::TestDestination());
  for (int i = 1; i <= 4; ++i)
    ASSERT_TRUE(store_.RotateSecret(dst, Secret(i), 1h, Scope::All())) << i;
  EXPECT_THAT(ClaimedSecrets(dst), ElementsAre(Secret(4), Secret(3), Secret(2), Secret(1), kFirst));
  auto sixth = store_.RotateSecret(dst, Secret(5), 1h, Scope::All());
  ASSERT_FALSE(sixth);
  EXPECT_EQ(sixth.error().kind, ErrorKind::kConflict);
  EXPECT_EQ(store_.GetDestination(dst, Scope::All())->secret, Secret(4));  // nothing changed

  ASSERT_TRUE(store_.RotateSecret(dst, Secret(5), 0s, Scope::All()));
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM destination_secrets"), "0");
  EXPECT_THAT(ClaimedSecrets(dst), ElementsAre(Secret(5)));
}

TEST_F(RotationPgTest, AnUnknownOrDeletedDestinationIsNotFound) {
  auto unknown = store_.RotateSecret(424242, Secret(1), 1h, Scope::All());
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().kind, ErrorKind::kNotFound);
  const int64_t dst = CreateDestination(testing::TestDestination());
  ASSERT_TRUE(store_.DeleteDestination(dst, Scope::All()));
  auto deleted = store_.RotateSecret(dst, Secret(1), 1h, Scope::All());
  ASSERT_FALSE(deleted);
  EXPECT_EQ(deleted.error().kind, ErrorKind::kNotFound);
}

TEST_F(RotationPgTest, ThePurgeErasesExpiredSecretsEvenWhenEventsAreKeptForever) {
  const int64_t dst = CreateDestination(testing::TestDestination());
  ASSERT_TRUE(store_.RotateSecret(dst, Secret(1), 1h, Scope::All()));
  ASSERT_TRUE(store_.RotateSecret(dst, Secret(2), 1h, Scope::All()));
  db_.Exec(
      "UPDATE destination_secrets SET expires_at = now() - interval '1 second'"
      " WHERE secret = '" +
      std::string(kFirst) + "'");
  ASSERT_TRUE(store_.PurgeExpired(Duration::zero(), 1000));
  EXPECT_EQ(db_.Scalar("SELECT string_agg(secret, ',') FROM destination_secrets"), Secret(1));
}

}  // namespace
}  // namespace webhookd::rotation_pgtest
