// What the broker sessions share (worker/broker_session.h): the reconnect backoff, with
// the time given, and the URL check each session starts with.
#include "worker/broker_session.h"

#include <gtest/gtest.h>

#include <chrono>

namespace webhookd::broker_session_test {
namespace {

using namespace std::chrono_literals;
using TimePoint = std::chrono::steady_clock::time_point;

TEST(ReconnectBackoffTest, AFailureWaits100MsDoublingTo5sAndAConnectStartsOver) {
  ReconnectBackoff backoff("amqp");
  const TimePoint t0{};
  EXPECT_FALSE(backoff.Waiting(t0)) << "nothing failed yet";
  const SendResult lost = backoff.Lost("amqp: connection refused", false, t0);
  EXPECT_EQ(lost.error, "amqp: connection refused");
  EXPECT_FALSE(lost.timed_out);
  const auto waiting = backoff.Waiting(t0 + 99ms);
  ASSERT_TRUE(waiting);
  EXPECT_EQ(waiting->error,
            "amqp: not connected, trying again shortly after: amqp: connection refused");
  EXPECT_FALSE(backoff.Waiting(t0 + 100ms));
  // Each failure in a row doubles the wait, up to 5 s.
  TimePoint at = t0 + 100ms;
  for (const auto wait : {200ms, 400ms, 800ms, 1600ms, 3200ms, 5000ms, 5000ms}) {
    EXPECT_TRUE(backoff.Lost("amqp: again", true, at).timed_out);
    EXPECT_TRUE(backoff.Waiting(at + wait - 1ms)) << wait.count();
    EXPECT_FALSE(backoff.Waiting(at + wait)) << wait.count();
    at += wait;
  }
  backoff.Connected();
  EXPECT_FALSE(backoff.Waiting(at));
  backoff.Lost("amqp: once more", false, at);
  EXPECT_FALSE(backoff.Waiting(at + 100ms)) << "a connect that worked starts the waits over";
}

TEST(BrokerUrlOfTest, AURLOfAnotherTransportOrNoneIsAnAnswerInTheTransportsWords) {
  Outgoing out;
  out.url = "amqp://broker.example:5672/%2F";
  const auto url = BrokerUrlOf(out, Transport::kAmqp, "amqp");
  ASSERT_TRUE(url);
  EXPECT_EQ(url->hosts.front().host, "broker.example");
  const auto other = BrokerUrlOf(out, Transport::kNats, "nats");
  ASSERT_FALSE(other);
  EXPECT_EQ(other.error().error, "nats: not a nats URL");
  out.url = "nats://n.example:4222";
  EXPECT_EQ(BrokerUrlOf(out, Transport::kAmqp, "amqp").error().error, "amqp: not an amqp URL");
  out.url = "not a url";
  const auto none = BrokerUrlOf(out, Transport::kRedis, "redis");
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().error.value_or("").rfind("redis: ", 0), 0u);
  EXPECT_FALSE(none.error().refused);
}

}  // namespace
}  // namespace webhookd::broker_session_test
