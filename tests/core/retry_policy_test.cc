#include "core/retry_policy.h"

#include <gtest/gtest.h>

#include "tests/testing/fakes.h"

namespace webhookd::retry_policy_test {
namespace {

using namespace std::chrono_literals;
using testing::FakeRandom;

RetryPolicy DefaultPolicy() { return RetryPolicy({30s, 2min, 10min, 1h}, 0.2); }

AttemptResult Status(int code, std::optional<Duration> retry_after = std::nullopt) {
  return AttemptResult{ClassifyStatus(code), code, retry_after};
}

AttemptResult TransportError() { return AttemptResult{Outcome::kRetryable, std::nullopt, {}}; }

TEST(RetryPolicyTest, EachDefaultWaitIsPlusMinusTwentyPercent) {
  const RetryPolicy policy = DefaultPolicy();
  const double lowest[] = {24, 96, 480, 2880};
  const double highest[] = {36, 144, 720, 4320};
  for (int k = 0; k < 4; ++k) {
    FakeRandom low({0.0}), high({0.999999});
    EXPECT_DOUBLE_EQ(Seconds(policy.Wait(k, low)), lowest[k]) << k;
    EXPECT_NEAR(Seconds(policy.Wait(k, high)), highest[k], highest[k] * 1e-5) << k;
  }
}

TEST(RetryPolicyTest, SecondAttemptIsThirtySecondsPlusMinusTwentyPercent) {
  const RetryPolicy policy = DefaultPolicy();
  FakeRandom lowest({0.0}), middle({0.5}), highest({0.999999});
  EXPECT_EQ(policy.Wait(0, lowest), 24s);
  EXPECT_EQ(policy.Wait(0, middle), 30s);
  EXPECT_NEAR(Seconds(policy.Wait(0, highest)), 36.0, 1e-3);
}

TEST(RetryPolicyTest, ZeroJitterIsTheScheduleExactly) {
  const RetryPolicy policy({1s, 7s}, 0.0);
  FakeRandom random({0.73});
  EXPECT_EQ(policy.Wait(0, random), 1s);
  EXPECT_EQ(policy.Wait(1, random), 7s);
}

TEST(RetryPolicyTest, CountsAttemptsUpToTheDeadLetter) {
  const RetryPolicy policy = DefaultPolicy();
  EXPECT_EQ(policy.max_attempts(), 5);
  const Duration expected[] = {30s, 2min, 10min, 1h};
  for (int attempt = 1; attempt <= 4; ++attempt) {
    FakeRandom random({0.5});
    const Decision d = policy.Next(attempt, Status(500), random);
    EXPECT_EQ(d.kind, Decision::Kind::kRetry) << attempt;
    EXPECT_EQ(d.wait, expected[attempt - 1]) << attempt;
    EXPECT_EQ(random.draws(), 1u) << attempt;
  }
  FakeRandom random({0.5});
  const Decision last = policy.Next(5, Status(503), random);
  EXPECT_EQ(last.kind, Decision::Kind::kDeadLetter);
  EXPECT_EQ(last.reason, DeadLetterReason::kExhausted);
  EXPECT_FALSE(last.disable_destination);
  EXPECT_EQ(random.draws(), 0u);
  EXPECT_EQ(policy.Next(6, TransportError(), random).kind, Decision::Kind::kDeadLetter);
}

TEST(RetryPolicyTest, TransportErrorsRetryOnTheSchedule) {
  const RetryPolicy policy = DefaultPolicy();
  FakeRandom random({0.0});
  const Decision d = policy.Next(2, TransportError(), random);
  EXPECT_EQ(d.kind, Decision::Kind::kRetry);
  EXPECT_EQ(d.wait, 96s);
}

TEST(RetryPolicyTest, ScheduleLengthSetsTheAttempts) {
  const RetryPolicy policy({1s}, 0.2);
  EXPECT_EQ(policy.max_attempts(), 2);
  FakeRandom random({0.5});
  EXPECT_EQ(policy.Next(1, Status(500), random).kind, Decision::Kind::kRetry);
  EXPECT_EQ(policy.Next(2, Status(500), random).kind, Decision::Kind::kDeadLetter);
}

TEST(RetryPolicyTest, SuccessAndPermanentDrawNothing) {
  const RetryPolicy policy = DefaultPolicy();
  FakeRandom random({0.5});
  const Decision ok = policy.Next(1, Status(200), random);
  EXPECT_EQ(ok.kind, Decision::Kind::kSucceed);
  const Decision gone = policy.Next(1, Status(404), random);
  EXPECT_EQ(gone.kind, Decision::Kind::kDeadLetter);
  EXPECT_EQ(gone.reason, DeadLetterReason::kPermanentFailure);
  EXPECT_EQ(random.draws(), 0u);
}

struct Row {
  int status;
  Decision::Kind kind;
  bool disable = false;
};

TEST(RetryPolicyTest, EveryClassificationRow) {
  const RetryPolicy policy = DefaultPolicy();
  using K = Decision::Kind;
  const Row rows[] = {
      {200, K::kSucceed},
      {204, K::kSucceed},
      {299, K::kSucceed},
      {301, K::kDeadLetter},
      {302, K::kDeadLetter},
      {400, K::kDeadLetter},
      {401, K::kDeadLetter},
      {403, K::kDeadLetter},
      {404, K::kDeadLetter},
      {408, K::kRetry},
      {410, K::kDeadLetter, true},
      {413, K::kDeadLetter},
      {422, K::kDeadLetter},
      {429, K::kRetry},
      {500, K::kRetry},
      {502, K::kRetry},
      {503, K::kRetry},
      {504, K::kRetry},
  };
  for (const Row& row : rows) {
    FakeRandom random({0.5});
    const Decision d = policy.Next(1, Status(row.status), random);
    EXPECT_EQ(d.kind, row.kind) << row.status;
    EXPECT_EQ(d.disable_destination, row.disable) << row.status;
    if (d.kind == K::kDeadLetter) {
      EXPECT_EQ(d.reason, DeadLetterReason::kPermanentFailure) << row.status;
    }
    if (d.kind == K::kRetry) {
      EXPECT_EQ(d.wait, row.status == 429 ? 60s : 30s) << row.status;
    }
  }
}

TEST(RetryPolicyTest, TooManyRequestsWithoutRetryAfterWaitsTwiceTheSchedule) {
  const RetryPolicy policy = DefaultPolicy();
  FakeRandom low({0.0}), high({0.999999});
  EXPECT_EQ(policy.Next(1, Status(429), low).wait, 48s);
  EXPECT_EQ(policy.Next(3, Status(429), low).wait, 960s);
  EXPECT_NEAR(Seconds(policy.Next(4, Status(429), high).wait), 8640, 0.1);
}

TEST(RetryPolicyTest, RetryAfterIsNeverShortened) {
  const RetryPolicy policy = DefaultPolicy();
  for (int code : {429, 503}) {
    FakeRandom low({0.0}), high({0.999999});
    // Longer and shorter than the scheduled 30 s: either way Retry-After rules.
    EXPECT_EQ(policy.Next(1, Status(code, 300s), low).wait, 300s) << code;
    EXPECT_NEAR(Seconds(policy.Next(1, Status(code, 300s), high).wait), 360, 1e-3) << code;
    FakeRandom low2({0.0});
    EXPECT_EQ(policy.Next(1, Status(code, 5s), low2).wait, 5s) << code;
    EXPECT_EQ(low.draws() + high.draws() + low2.draws(), 3u);
  }
}

TEST(RetryPolicyTest, RetryAfterZeroMeansRetryAtOnce) {
  FakeRandom random({0.9});
  EXPECT_EQ(DefaultPolicy().Next(1, Status(503, 0s), random).wait, 0s);
}

TEST(RetryPolicyTest, RetryAfterIsCappedAtADay) {
  const RetryPolicy policy = DefaultPolicy();
  FakeRandom high({0.999999});
  EXPECT_EQ(policy.Next(1, Status(429, 23h), high).wait, 24h);
  FakeRandom low({0.0});
  EXPECT_EQ(policy.Next(1, Status(503, 23h), low).wait, 23h);
  EXPECT_EQ(policy.Next(1, Status(503, 24h), low).wait, 24h);
  EXPECT_EQ(policy.Next(1, Status(503, 48h), low).wait, 24h);
  EXPECT_EQ(policy.Next(1, Status(503, Duration::max()), high).wait, 24h);
}

TEST(RetryPolicyTest, RetryAfterOnOtherStatusesIsIgnored) {
  const RetryPolicy policy = DefaultPolicy();
  FakeRandom random({0.0});
  EXPECT_EQ(policy.Next(1, Status(500, 300s), random).wait, 24s);
  EXPECT_EQ(policy.Next(1, Status(408, 300s), random).wait, 24s);
}

TEST(RetryPolicyTest, RetryAfterDoesNotBuyExtraAttempts) {
  FakeRandom random({0.0});
  const Decision d = DefaultPolicy().Next(5, Status(429, 10s), random);
  EXPECT_EQ(d.kind, Decision::Kind::kDeadLetter);
  EXPECT_EQ(d.reason, DeadLetterReason::kExhausted);
}

TEST(RetryPolicyTest, ReasonNames) {
  EXPECT_EQ(DeadLetterReasonName(DeadLetterReason::kExhausted), "exhausted");
  EXPECT_EQ(DeadLetterReasonName(DeadLetterReason::kPermanentFailure), "permanent_failure");
}

}  // namespace
}  // namespace webhookd::retry_policy_test
