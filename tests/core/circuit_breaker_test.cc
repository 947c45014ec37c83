#include "core/circuit_breaker.h"

#include <gtest/gtest.h>

#include "tests/testing/fakes.h"

namespace webhookd {
namespace {

using namespace std::chrono_literals;
using testing::FakeClock;
using testing::FakeRandom;

class CircuitBreakerTest : public ::testing::Test {
 protected:
  // A retryable failure (500) unless told otherwise, at the fake clock's now.
  CircuitChange Fail(Circuit& c, std::optional<int> status = 500, bool probe = false) {
    const Outcome outcome = status ? ClassifyStatus(*status) : Outcome::kRetryable;
    return breaker_.Record(c, outcome, status, probe, clock_.Now(), clock_.Now(), random_);
  }
  CircuitChange Succeed(Circuit& c, bool probe = false) {
    return breaker_.Record(c, Outcome::kSuccess, 200, probe, clock_.Now(), clock_.Now(), random_);
  }
  // Opens a closed circuit with threshold failures.
  void Open(Circuit& c) {
    for (int i = 0; i < 3; ++i) Fail(c);
    ASSERT_EQ(c.state, CircuitState::kOpen);
  }

  FakeClock clock_;
  FakeRandom random_{{0.5}};  // factor 1.0: waits are the cooldown exactly
  CircuitBreaker breaker_{CircuitSettings{3, 30s}};
};

TEST_F(CircuitBreakerTest, OpensAtTheThresholdOfConsecutiveFailures) {
  Circuit c;
  EXPECT_EQ(Fail(c), CircuitChange::kNone);
  EXPECT_EQ(Fail(c), CircuitChange::kNone);
  EXPECT_EQ(c.state, CircuitState::kClosed);
  EXPECT_EQ(c.consecutive_failures, 2);
  EXPECT_EQ(Fail(c), CircuitChange::kOpened);
  EXPECT_EQ(c.state, CircuitState::kOpen);
  EXPECT_EQ(c.consecutive_failures, 3);
  EXPECT_EQ(c.cooldown, 30s);
  EXPECT_EQ(c.next_probe_at, clock_.Now() + 30s);
  // More failures while open change nothing but the count.
  EXPECT_EQ(Fail(c), CircuitChange::kNone);
  EXPECT_EQ(c.state, CircuitState::kOpen);
  EXPECT_EQ(c.next_probe_at, clock_.Now() + 30s);
}

TEST_F(CircuitBreakerTest, EveryRetryableOutcomeButA429CountsAsAFailure) {
  for (std::optional<int> status :
       {std::optional<int>(408), std::optional<int>(500), std::optional<int>(502),
        std::optional<int>(503), std::optional<int>(599), std::optional<int>()}) {
    Circuit c;
    Fail(c, status);
    EXPECT_EQ(c.consecutive_failures, 1) << status.value_or(0);
  }
  Circuit c;
  for (int i = 0; i < 10; ++i) EXPECT_EQ(Fail(c, 429), CircuitChange::kNone);
  EXPECT_EQ(c.consecutive_failures, 0);
  EXPECT_EQ(c.state, CircuitState::kClosed);
  // A 429 is still a failed attempt: the destination has been failing since the first.
  EXPECT_EQ(c.failing_since, clock_.Now());
}

TEST_F(CircuitBreakerTest, PermanentFailuresNeitherCountNorResetButStartFailingSince) {
  Circuit c;
  Fail(c);
  Fail(c, 404);
  EXPECT_EQ(c.consecutive_failures, 1);
  Fail(c);
  EXPECT_EQ(c.consecutive_failures, 2);
  EXPECT_TRUE(c.failing_since);
}

TEST_F(CircuitBreakerTest, ASuccessResetsTheCountAndFailingSince) {
  Circuit c;
  const Timestamp first = clock_.Now();
  Fail(c);
  clock_.Advance(5s);
  Fail(c);
  EXPECT_EQ(c.failing_since, first);  // the first failure since the last success
  Succeed(c);
  EXPECT_EQ(c.consecutive_failures, 0);
  EXPECT_EQ(c.failing_since, std::nullopt);
  Fail(c);
  Fail(c);
  EXPECT_EQ(c.state, CircuitState::kClosed);  // the count started again from zero
  EXPECT_EQ(c.failing_since, clock_.Now());
}

TEST_F(CircuitBreakerTest, SkippedAttemptsChangeNothing) {
  Circuit c;
  Open(c);
  const Circuit before = c;
  EXPECT_EQ(breaker_.Record(c, Outcome::kSkipped, std::nullopt, false, clock_.Now(), clock_.Now(),
                            random_),
            CircuitChange::kNone);
  EXPECT_EQ(c.consecutive_failures, before.consecutive_failures);
  EXPECT_EQ(c.next_probe_at, before.next_probe_at);
  EXPECT_EQ(c.failing_since, before.failing_since);
}

TEST_F(CircuitBreakerTest, AClosedCircuitSends) {
  Circuit c;
  EXPECT_EQ(breaker_.Admit(c, clock_.Now(), 0), Admission::kSend);
  EXPECT_EQ(breaker_.Admit(c, clock_.Now(), 100), Admission::kSend);
}

TEST_F(CircuitBreakerTest, AnOpenCircuitSkipsUntilNextProbeAtThenProbesOnce) {
  Circuit c;
  Open(c);
  EXPECT_EQ(breaker_.Admit(c, clock_.Now(), 0), Admission::kSkip);
  clock_.Advance(30s - 1us);
  EXPECT_EQ(breaker_.Admit(c, clock_.Now(), 0), Admission::kSkip);
  EXPECT_EQ(c.state, CircuitState::kOpen);
  clock_.Advance(1us);
  EXPECT_EQ(breaker_.Admit(c, clock_.Now(), 0), Admission::kProbe);
  EXPECT_EQ(c.state, CircuitState::kHalfOpen);
  // The probe is out: everything else waits, unattempted.
  EXPECT_EQ(breaker_.Admit(c, clock_.Now(), 1), Admission::kWait);
  EXPECT_EQ(breaker_.Admit(c, clock_.Now() + 1h, 1), Admission::kWait);
  EXPECT_EQ(c.state, CircuitState::kHalfOpen);
}

TEST_F(CircuitBreakerTest, TheProbeWaitsForAttemptsStillInFlight) {
  Circuit c;
  Open(c);
  clock_.Advance(31s);
  EXPECT_EQ(breaker_.Admit(c, clock_.Now(), 2), Admission::kWait);
  EXPECT_EQ(c.state, CircuitState::kOpen);
  EXPECT_EQ(breaker_.Admit(c, clock_.Now(), 0), Admission::kProbe);
}

TEST_F(CircuitBreakerTest, ALostProbeIsSentAgain) {
  Circuit c;
  Open(c);
  clock_.Advance(30s);
  ASSERT_EQ(breaker_.Admit(c, clock_.Now(), 0), Admission::kProbe);
  // Its worker died and the lease ran out: nothing is in flight any more.
  EXPECT_EQ(breaker_.Admit(c, clock_.Now() + 1min, 0), Admission::kProbe);
  EXPECT_EQ(c.state, CircuitState::kHalfOpen);
}

TEST_F(CircuitBreakerTest, ASuccessfulProbeClosesTheCircuit) {
  Circuit c;
  Open(c);
  clock_.Advance(30s);
  ASSERT_EQ(breaker_.Admit(c, clock_.Now(), 0), Admission::kProbe);
  EXPECT_EQ(Succeed(c, /*probe=*/true), CircuitChange::kRecovered);
  EXPECT_EQ(c.state, CircuitState::kClosed);
  EXPECT_EQ(c.consecutive_failures, 0);
  EXPECT_EQ(c.failing_since, std::nullopt);
  EXPECT_EQ(c.next_probe_at, std::nullopt);
  EXPECT_EQ(breaker_.Admit(c, clock_.Now(), 5), Admission::kSend);
  // Closed again, it opens from a fresh count with the first cooldown.
  Fail(c);
  Fail(c);
  EXPECT_EQ(Fail(c), CircuitChange::kOpened);
  EXPECT_EQ(c.cooldown, 30s);
}

TEST_F(CircuitBreakerTest, AFailedProbeReopensWithTheCooldownDoubledUpToAnHour) {
  Circuit c;
  Open(c);
  const Duration expected[] = {60s, 120s, 240s, 480s, 960s, 1920s, 3600s, 3600s, 3600s};
  for (Duration cooldown : expected) {
    clock_.Set(*c.next_probe_at);
    ASSERT_EQ(breaker_.Admit(c, clock_.Now(), 0), Admission::kProbe);
    EXPECT_EQ(Fail(c, 500, /*probe=*/true), CircuitChange::kReopened);
    EXPECT_EQ(c.state, CircuitState::kOpen);
    EXPECT_EQ(c.cooldown, cooldown);
    EXPECT_EQ(c.next_probe_at, clock_.Now() + cooldown);
  }
}

TEST_F(CircuitBreakerTest, AnyProbeAnswerButSuccessReopens) {
  for (std::optional<int> status :
       {std::optional<int>(429), std::optional<int>(404), std::optional<int>()}) {
    Circuit c;
    Open(c);
    clock_.Set(*c.next_probe_at);
    ASSERT_EQ(breaker_.Admit(c, clock_.Now(), 0), Admission::kProbe);
    EXPECT_EQ(Fail(c, status, /*probe=*/true), CircuitChange::kReopened) << status.value_or(0);
    EXPECT_EQ(c.cooldown, 60s);
  }
}

TEST_F(CircuitBreakerTest, OutcomesOfOtherAttemptsDoNotDecideAHalfOpenCircuit) {
  Circuit c;
  Open(c);
  clock_.Advance(30s);
  ASSERT_EQ(breaker_.Admit(c, clock_.Now(), 0), Admission::kProbe);
  // Sent before the circuit opened, they end now: the probe decides, not they.
  EXPECT_EQ(Succeed(c), CircuitChange::kNone);
  EXPECT_EQ(Fail(c), CircuitChange::kNone);
  EXPECT_EQ(c.state, CircuitState::kHalfOpen);
  // Nor does a probe's record arriving after the circuit was reset (closed).
  Circuit closed;
  EXPECT_EQ(Succeed(closed, /*probe=*/true), CircuitChange::kNone);
  EXPECT_EQ(Fail(closed, 500, /*probe=*/true), CircuitChange::kNone);
  EXPECT_EQ(closed.state, CircuitState::kClosed);
}

TEST_F(CircuitBreakerTest, ProbeTimeIsTheCooldownPlusMinusTwentyPercent) {
  const Timestamp now = clock_.Now();
  FakeRandom lowest({0.0}), highest({0.999999});
  EXPECT_EQ(CircuitBreaker::ProbeTime(30s, now, lowest), now + 24s);
  const double high = Seconds(CircuitBreaker::ProbeTime(30s, now, highest) - now);
  EXPECT_NEAR(high, 36.0, 1e-3);
  EXPECT_LT(high, 36.0);

  // The jitter applies where the circuit opens too.
  Circuit c;
  FakeRandom low({0.0});
  for (int i = 0; i < 3; ++i) {
    breaker_.Record(c, Outcome::kRetryable, 500, false, now, now, low);
  }
  EXPECT_EQ(c.next_probe_at, now + 24s);
}

TEST_F(CircuitBreakerTest, TheCooldownIsAtMostAnHourFromTheStart) {
  CircuitBreaker breaker(CircuitSettings{1, 5h});
  Circuit c;
  breaker.Record(c, Outcome::kRetryable, 500, false, clock_.Now(), clock_.Now(), random_);
  EXPECT_EQ(c.cooldown, 1h);
}

TEST(FailingTooLongTest, OnlyAfterDisableAfterWithNoSuccessAndNeverWhenZero) {
  const Timestamp t0(std::chrono::seconds(1'700'000'000));
  Circuit c;
  EXPECT_FALSE(FailingTooLong(c, t0 + 1000h, 1h));
  c.failing_since = t0;
  EXPECT_FALSE(FailingTooLong(c, t0 + 1h, 1h));
  EXPECT_TRUE(FailingTooLong(c, t0 + 1h + 1us, 1h));
  EXPECT_FALSE(FailingTooLong(c, t0 + 10000h, Duration::zero()));
}

TEST(CircuitStateTest, NamesMatchTheApi) {
  EXPECT_EQ(CircuitStateName(CircuitState::kClosed), "closed");
  EXPECT_EQ(CircuitStateName(CircuitState::kOpen), "open");
  EXPECT_EQ(CircuitStateName(CircuitState::kHalfOpen), "half_open");
  for (CircuitState s : {CircuitState::kClosed, CircuitState::kOpen, CircuitState::kHalfOpen}) {
    EXPECT_EQ(ParseCircuitState(CircuitStateName(s)), s);
  }
  EXPECT_EQ(ParseCircuitState("half-open"), std::nullopt);
}

}  // namespace
}  // namespace webhookd
