#include "client/publisher.h"

#include <gtest/gtest.h>

#include <deque>
#include <set>

#include "tests/testing/fakes.h"

namespace webhookd::client::publisher_test {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using testing::FakeClock;
using testing::FakeRandom;

HttpResponse Answer(int status, std::string body = "{}",
                    std::optional<std::string> retry_after = std::nullopt) {
  return HttpResponse{status, std::move(body), std::move(retry_after)};
}

TransportResult Unreachable() {
  return std::unexpected(TransportError{TransportError::Kind::kConnect, "Connection"});
}

// Answers with the scripted results in order, then repeats the last one; keeps every
// request.
class ScriptedTransport final : public Transport {
 public:
  explicit ScriptedTransport(std::vector<TransportResult> script) : script_(std::move(script)) {}
  TransportResult Send(const HttpRequest& request) override {
    requests.push_back(request);
    return script_[std::min(requests.size(), script_.size()) - 1];
  }
  std::string Header(size_t i, const std::string& name) const {
    for (const auto& [k, v] : requests.at(i).headers) {
      if (k == name) return v;
    }
    return "";
  }
  std::vector<HttpRequest> requests;

 private:
  std::vector<TransportResult> script_;
};

// Sleeps by moving the fake clock, and remembers every wait.
class FakeSleeper final : public Sleeper {
 public:
  explicit FakeSleeper(FakeClock& clock) : clock_(clock) {}
  void Sleep(Duration d) override {
    waits.push_back(d);
    clock_.Advance(d);
  }
  std::vector<Duration> waits;

 private:
  FakeClock& clock_;
};

struct Fixture {
  explicit Fixture(std::vector<TransportResult> script, double unit = 0.5)
      : transport(std::move(script)), random({unit}) {}
  PublishResult Publish(const Event& event) {
    Publisher publisher({transport, schedule, budget, clock, random, sleeper}, "whk_secret");
    return publisher.Publish(event);
  }
  ScriptedTransport transport;
  FakeClock clock;
  FakeRandom random;
  FakeSleeper sleeper{clock};
  RetrySchedule schedule;
  RetryBudget budget{clock};
};

Event OrderCreated() { return Event{"order.created", R"({"id": 1})", {}, {}, {}}; }

TEST(PublisherTest, RetriesUnavailableWithTheSameKeyAndBody) {
  Fixture f({Answer(503), Answer(503), Answer(202, R"({"id":"evt_1"})")});
  const PublishResult result = f.Publish(OrderCreated());
  EXPECT_EQ(result.outcome, PublishResult::Outcome::kAccepted);
  EXPECT_EQ(result.status, 202);
  EXPECT_EQ(result.body, R"({"id":"evt_1"})");
  EXPECT_EQ(result.attempts, 3);
  ASSERT_EQ(f.transport.requests.size(), 3u);
  const std::string key = f.transport.Header(0, "Idempotency-Key");
  EXPECT_TRUE(key.starts_with("send-")) << key;
  EXPECT_EQ(key.size(), 5u + 32u);
  EXPECT_EQ(result.idempotency_key, key);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(f.transport.Header(i, "Idempotency-Key"), key);
    EXPECT_EQ(f.transport.Header(i, "Authorization"), "Bearer whk_secret");
    EXPECT_EQ(f.transport.Header(i, "Content-Type"), "application/json");
    EXPECT_EQ(f.transport.requests[i].path, "/v1/events");
    EXPECT_EQ(f.transport.requests[i].body, f.transport.requests[0].body);
  }
  // Random 0.5: half of 400 ms, then half of 800 ms.
  EXPECT_EQ(f.sleeper.waits, (std::vector<Duration>{milliseconds(200), milliseconds(400)}));
}

TEST(PublisherTest, EachEventGetsItsOwnKeyAndAGivenKeyIsUsed) {
  Fixture f({Answer(202)});
  f.Publish(OrderCreated());
  f.Publish(OrderCreated());
  Event keyed = OrderCreated();
  keyed.idempotency_key = "order-1-created";
  f.Publish(keyed);
  ASSERT_EQ(f.transport.requests.size(), 3u);
  EXPECT_NE(f.transport.Header(0, "Idempotency-Key"), f.transport.Header(1, "Idempotency-Key"));
  EXPECT_EQ(f.transport.Header(2, "Idempotency-Key"), "order-1-created");
}

TEST(PublisherTest, SendsThePayloadBytesAsGiven) {
  Fixture f({Answer(202)});
  Event event{"order.created",
              "{ \"n\": 1.000000000000000000001 ,\"big\":123456789012345678901234}",
              "acme",
              "dst_7",
              {}};
  f.Publish(event);
  EXPECT_EQ(f.transport.requests.at(0).body,
            "{\"type\":\"order.created\",\"payload\":{ \"n\": 1.000000000000000000001 "
            ",\"big\":123456789012345678901234},\"tenant_id\":\"acme\",\"destination_id\":"
            "\"dst_7\"}");
}

TEST(PublisherTest, WaitsAtLeastRetryAfter) {
  Fixture f({Answer(503, "{}", "2"), Answer(202)}, /*unit=*/0.0);
  const PublishResult result = f.Publish(OrderCreated());
  EXPECT_EQ(result.outcome, PublishResult::Outcome::kAccepted);
  ASSERT_EQ(f.sleeper.waits.size(), 1u);
  EXPECT_GE(f.sleeper.waits[0], seconds(2));
}

TEST(PublisherTest, ReadsARetryAfterDateAgainstTheClock) {
  Fixture f({Answer(429, "{}", "Sun, 06 Nov 1994 08:49:37 GMT"), Answer(202)}, /*unit=*/0.0);
  f.clock.Set(Timestamp(seconds(784111774)));  // three seconds before that date
  f.Publish(OrderCreated());
  EXPECT_EQ(f.sleeper.waits, (std::vector<Duration>{seconds(3)}));
}

TEST(PublisherTest, RetryAfterBeyondMaxWaitGivesUpAtOnce) {
  Fixture f({Answer(503, "{}", "3600"), Answer(202)});
  const PublishResult result = f.Publish(OrderCreated());
  EXPECT_EQ(result.outcome, PublishResult::Outcome::kGaveUp);
  EXPECT_EQ(result.attempts, 1);
  EXPECT_EQ(result.status, 503);
  EXPECT_TRUE(f.sleeper.waits.empty());
  EXPECT_NE(result.error.find("Retry-After 3600"), std::string::npos) << result.error;
}

TEST(PublisherTest, UnprocessableIsRefusedWithoutRetry) {
  const std::string problem = R"({"type":"about:blank","title":"Unprocessable","status":422})";
  Fixture f({Answer(422, problem), Answer(202)});
  const PublishResult result = f.Publish(OrderCreated());
  EXPECT_EQ(result.outcome, PublishResult::Outcome::kRefused);
  EXPECT_EQ(result.status, 422);
  EXPECT_EQ(result.body, problem);
  EXPECT_EQ(result.attempts, 1);
  EXPECT_EQ(f.transport.requests.size(), 1u);
  EXPECT_TRUE(f.sleeper.waits.empty());
}

TEST(PublisherTest, ConnectionFailuresAreRetried) {
  Fixture f({Unreachable(), Unreachable(), Answer(202)}, /*unit=*/0.999999);
  const PublishResult result = f.Publish(OrderCreated());
  EXPECT_EQ(result.outcome, PublishResult::Outcome::kAccepted);
  EXPECT_EQ(result.attempts, 3);
  ASSERT_EQ(f.sleeper.waits.size(), 2u);
  EXPECT_NEAR(Seconds(f.sleeper.waits[0]), 0.4, 1e-5);
  EXPECT_NEAR(Seconds(f.sleeper.waits[1]), 0.8, 1e-5);
}

TEST(PublisherTest, GivesUpAfterMaxAttempts) {
  Fixture f({Answer(503)});
  const PublishResult result = f.Publish(OrderCreated());
  EXPECT_EQ(result.outcome, PublishResult::Outcome::kGaveUp);
  EXPECT_EQ(result.attempts, 6);
  EXPECT_EQ(result.status, 503);
  EXPECT_EQ(f.transport.requests.size(), 6u);
  EXPECT_EQ(f.sleeper.waits.size(), 5u);
}

TEST(PublisherTest, GivesUpWithoutAStatusWhenTheLastAttemptGotNoAnswer) {
  Fixture f({Answer(503), Unreachable()});
  const PublishResult result = f.Publish(OrderCreated());
  EXPECT_EQ(result.outcome, PublishResult::Outcome::kGaveUp);
  EXPECT_EQ(result.status, 0);
  EXPECT_NE(result.error.find("could not connect"), std::string::npos) << result.error;
}

TEST(PublisherTest, ASpentBudgetStopsRetries) {
  Fixture f({Answer(503), Answer(202)});
  for (int i = 0; i < 10; ++i) f.budget.RecordRequest();
  EXPECT_TRUE(f.budget.TryRetry());
  EXPECT_TRUE(f.budget.TryRetry());
  // The event's own request makes 11, which allows 2 retries: both are spent.
  const PublishResult result = f.Publish(OrderCreated());
  EXPECT_EQ(result.outcome, PublishResult::Outcome::kGaveUp);
  EXPECT_EQ(result.attempts, 1);
  EXPECT_NE(result.error.find("budget"), std::string::npos) << result.error;
}

TEST(PublisherTest, AnAnswerWebhookdNeverGivesIsNotRetried) {
  Fixture f({Answer(302), Answer(202)});
  const PublishResult result = f.Publish(OrderCreated());
  EXPECT_EQ(result.outcome, PublishResult::Outcome::kGaveUp);
  EXPECT_EQ(result.attempts, 1);
}

}  // namespace
}  // namespace webhookd::client::publisher_test
