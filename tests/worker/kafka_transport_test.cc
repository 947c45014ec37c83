// The Kafka transport (worker/kafka_transport.h) against librdkafka's mock clusters on
// loopback: what a message carries, produce errors retried by the idempotent producer, a
// cluster down and back, the private-address rule (on the bootstrap hosts and on every
// address librdkafka resolves), one key's order, and that a down cluster holds up no other.
#include "worker/kafka_transport.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tests/testing/kafka_mock.h"

namespace webhookd::kafka_transport_test {
namespace {

using namespace std::chrono_literals;
using testing::KafkaMock;
using testing::KafkaRecord;

// Far longer than any attempt here may take (their timeout is 1 s), for a loaded machine.
constexpr auto kReportBound = 10s;

Outgoing Message(const std::string& url, const std::string& id, BrokerSettings broker = {}) {
  Outgoing out;
  out.url = url;
  out.body = R"({"type":"order.created","data":{"n":1}})";
  out.headers = {{"Content-Type", "application/json"},
                 {"webhook-id", id},
                 {"webhook-timestamp", "1700000000"},
                 {"webhook-signature", "v1,abc"}};
  if (!broker.topic) broker.topic = "webhooks";
  out.broker = broker;
  return out;
}

// A send's result through a future, so that each wait is bounded. Its state outlives it,
// as a report may come after a test gave up waiting for it.
class Pending {
 public:
  Pending(KafkaTransport& transport, Outgoing out) : state_(std::make_shared<State>()) {
    result_ = state_->promise.get_future();
    transport.Start(std::move(out), [state = state_](SendResult r) {
      if (state->calls.fetch_add(1) == 0) state->promise.set_value(std::move(r));
    });
  }
  bool Ready(std::chrono::milliseconds within = 0ms) {
    return result_.wait_for(within) == std::future_status::ready;
  }
  // The result, or a failed test and an error result after kReportBound.
  SendResult Get() {
    if (!Ready(std::chrono::duration_cast<std::chrono::milliseconds>(kReportBound))) {
      ADD_FAILURE() << "no report within " << kReportBound.count() << " s";
      SendResult none;
      none.error = "no report";
      return none;
    }
    return result_.get();
  }
  int calls() const { return state_->calls.load(); }

 private:
  struct State {
    std::promise<SendResult> promise;
    std::atomic<int> calls{0};
  };
  std::shared_ptr<State> state_;
  std::future<SendResult> result_;
};

SendResult SendAndWait(KafkaTransport& transport, Outgoing out) {
  return Pending(transport, std::move(out)).Get();
}

// Ample for a producer's first message, which may wait a second for its producer id
// (librdkafka's own timer) on top of the time a loaded machine adds.
KafkaTransport::Options Loopback() {
  KafkaTransport::Options o;
  o.attempt_timeout = 3s;
  o.allow_private = true;
  return o;
}

// For the tests of what times out; their producers are made with WarmUp first.
KafkaTransport::Options Short() {
  KafkaTransport::Options o = Loopback();
  o.attempt_timeout = 1s;
  return o;
}

// A first message to `url` confirmed, within a few attempts.
bool WarmUp(KafkaTransport& transport, const std::string& url, const std::string& id) {
  for (int i = 0; i < 5; ++i) {
    if (SendAndWait(transport, Message(url, id)).acknowledged) return true;
  }
  return false;
}

std::map<std::string, std::string> HeadersOf(const KafkaRecord& record) {
  return {record.headers.begin(), record.headers.end()};
}

// Names that only this resolver knows, answered in turn by each of their scripts' entries
// (the last one again once the script is done). Asked from librdkafka's threads.
class ScriptedResolver final : public Resolver {
 public:
  using Script = std::map<std::string, std::vector<std::string>>;
  explicit ScriptedResolver(Script script) : script_(std::move(script)) {}
  Result<std::vector<IpAddress>> Resolve(const std::string& host) override {
    std::lock_guard lock(mu_);
    ++asked_;
    auto it = script_.find(host);
    if (it == script_.end()) return std::unexpected(Error{ErrorKind::kInvalid, "no such name", {}});
    const std::string& answer = it->second[std::min(turn_[host]++, it->second.size() - 1)];
    return std::vector<IpAddress>{*ParseIpLiteral(answer)};
  }
  int asked() {
    std::lock_guard lock(mu_);
    return asked_;
  }

 private:
  std::mutex mu_;
  Script script_;
  std::map<std::string, size_t> turn_;
  int asked_ = 0;
};

TEST(KafkaTransportTest, AMessageLandsWithItsKeyValueAndHeadersAndItsReportIsTheSuccess) {
  KafkaMock kafka;
  kafka.CreateTopic("orders");
  KafkaTransport transport(Loopback());
  BrokerSettings broker;
  broker.topic = "orders";
  const SendResult r = SendAndWait(transport, Message(kafka.url(), "evt_1", broker));
  EXPECT_TRUE(r.acknowledged) << r.error.value_or("");
  EXPECT_FALSE(r.error);
  EXPECT_FALSE(r.status_code);
  EXPECT_EQ(r.body, R"({"partition":0,"offset":0})");
  Outgoing ordered = Message(kafka.url(), "evt_2", broker);
  ordered.headers.emplace_back("Webhook-Ordering-Key", "customer-7");
  const SendResult second = SendAndWait(transport, ordered);
  EXPECT_EQ(second.body, R"({"partition":0,"offset":1})") << second.error.value_or("");

  const std::vector<KafkaRecord> records = kafka.Consume("orders");
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].key, "evt_1");  // no ordering key: the webhook-id
  EXPECT_EQ(records[0].value, R"({"type":"order.created","data":{"n":1}})");
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"content-type", "application/json"},
      {"webhook-id", "evt_1"},
      {"webhook-timestamp", "1700000000"},
      {"webhook-signature", "v1,abc"}};
  EXPECT_EQ(records[0].headers, expected);
  EXPECT_EQ(records[1].key, "customer-7");
  EXPECT_EQ(HeadersOf(records[1])["webhook-ordering-key"], "customer-7");
}

TEST(KafkaTransportTest, RefusedProduceRequestsAreRetriedAndTheMessageLandsOnce) {
  KafkaMock kafka;
  kafka.CreateTopic("webhooks");
  KafkaTransport transport(Loopback());
  kafka.FailProduceRequests({RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION,
                             RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT,
                             RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS});
  const SendResult r = SendAndWait(transport, Message(kafka.url(), "evt_1"));
  EXPECT_TRUE(r.acknowledged) << r.error.value_or("");
  const std::vector<KafkaRecord> records = kafka.Consume("webhooks");
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].key, "evt_1");
}

TEST(KafkaTransportTest, ADownClusterTimesOutWithinTheAttemptAndTheNextMessageLandsOnceItIsBack) {
  KafkaMock kafka;
  kafka.CreateTopic("webhooks");
  KafkaTransport transport(Short());
  ASSERT_TRUE(WarmUp(transport, kafka.url(), "evt_1"));
  kafka.Down();
  const auto started = std::chrono::steady_clock::now();
  const SendResult lost = SendAndWait(transport, Message(kafka.url(), "evt_2"));
  const auto took = std::chrono::steady_clock::now() - started;
  EXPECT_FALSE(lost.acknowledged);
  EXPECT_TRUE(lost.timed_out) << lost.error.value_or("");
  EXPECT_EQ(lost.error, "kafka: Local: Message timed out");
  EXPECT_GE(took, 900ms);
  // Not librdkafka's own report, which comes at its next look for expired messages (once
  // a second, and up to 2.7 s here), but the attempt's deadline.
  EXPECT_LT(took, 1500ms);
  kafka.Up();
  SendResult back;
  for (int i = 0; i < 10 && !back.acknowledged; ++i) {
    back = SendAndWait(transport, Message(kafka.url(), "evt_3"));
  }
  EXPECT_TRUE(back.acknowledged) << back.error.value_or("");
  const std::vector<KafkaRecord> records = kafka.Consume("webhooks");
  ASSERT_GE(records.size(), 2u);
  EXPECT_EQ(records.front().key, "evt_1");
  EXPECT_EQ(records.back().key, "evt_3");
}

TEST(KafkaTransportTest, APrivateBootstrapAddressIsRefusedUnlessAllowed) {
  KafkaMock kafka;
  kafka.CreateTopic("webhooks");
  KafkaTransport::Options options = Loopback();
  options.allow_private = false;
  KafkaTransport transport(options);
  const SendResult r = SendAndWait(transport, Message(kafka.url(), "evt_1"));
  EXPECT_TRUE(r.refused);
  EXPECT_FALSE(r.acknowledged);
  EXPECT_EQ(r.error, std::string(kAddressNotAllowed));
  EXPECT_TRUE(kafka.Consume("webhooks").empty());
}

TEST(KafkaTransportTest, LibrdkafkaConnectsOnlyToWhatTheResolverAnsweredAndTheRuleAllowed) {
  KafkaMock kafka;
  kafka.CreateTopic("webhooks");
  const std::string port = kafka.bootstraps().substr(kafka.bootstraps().rfind(':') + 1);
  const std::string url = "kafka://kafka.example:" + port;
  {
    // A name no DNS knows lands: librdkafka asked this resolver, not getaddrinfo.
    ScriptedResolver resolver(ScriptedResolver::Script{{"kafka.example", {"127.0.0.1"}}});
    KafkaTransport::Options options = Loopback();
    options.resolver = &resolver;
    KafkaTransport transport(options);
    const SendResult r = SendAndWait(transport, Message(url, "evt_1"));
    EXPECT_TRUE(r.acknowledged) << r.error.value_or("");
    EXPECT_GE(resolver.asked(), 2);  // the vetting before the producer, then librdkafka's
  }
  {
    // A public answer first, then a private one (DNS rebinding): librdkafka is refused the
    // second, so nothing is connected to and the message times out.
    ScriptedResolver resolver(
        ScriptedResolver::Script{{"kafka.example", {"8.8.8.8", "127.0.0.1"}}});
    KafkaTransport::Options options = Short();
    options.allow_private = false;
    options.resolver = &resolver;
    KafkaTransport transport(options);
    const SendResult r = SendAndWait(transport, Message(url, "evt_2"));
    EXPECT_FALSE(r.acknowledged);
    EXPECT_TRUE(r.timed_out) << r.error.value_or("");
    EXPECT_GE(resolver.asked(), 2);
  }
  const std::vector<KafkaRecord> records = kafka.Consume("webhooks");
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].key, "evt_1");
}

Outgoing Ordered(const std::string& url, int i) {
  Outgoing out = Message(url, "evt_" + std::to_string(i));
  out.headers.emplace_back("webhook-ordering-key", "customer-1");
  return out;
}

// Errors are injected only while one request is in flight: librdkafka 2.0.2's mock checks
// an idempotent producer's sequence numbers only for transactional ones, so it appends a
// later request after an earlier one failed (a real broker refuses it as out of order),
// and librdkafka then takes the failed one as persisted (its implicit ack) though the mock
// dropped it.
TEST(KafkaTransportTest, OneKeysMessagesKeepTheirOrder) {
  KafkaMock kafka;
  kafka.CreateTopic("webhooks");
  KafkaTransport transport(Loopback());
  // Ten at once: librdkafka keeps a partition's messages in the order they were produced.
  std::vector<std::unique_ptr<Pending>> sends;
  for (int i = 0; i < 10; ++i) {
    sends.push_back(std::make_unique<Pending>(transport, Ordered(kafka.url(), i)));
  }
  for (auto& send : sends) {
    const SendResult r = send->Get();
    EXPECT_TRUE(r.acknowledged) << r.error.value_or("");
  }
  // Ten more each after the last one's confirm, as the dispatcher sends a fifo key's, each
  // of them refused once before it lands.
  for (int i = 10; i < 20; ++i) {
    kafka.FailProduceRequests({i % 2 == 0 ? RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION
                                          : RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT});
    const SendResult r = SendAndWait(transport, Ordered(kafka.url(), i));
    EXPECT_TRUE(r.acknowledged) << r.error.value_or("");
  }
  const std::vector<KafkaRecord> records = kafka.Consume("webhooks");
  ASSERT_EQ(records.size(), 20u);
  for (int i = 0; i < 20; ++i) {
    EXPECT_EQ(HeadersOf(records[i])["webhook-id"], "evt_" + std::to_string(i));
    EXPECT_EQ(records[i].key, "customer-1");
  }
}

TEST(KafkaTransportTest, ADownClusterHoldsUpNoOtherDestination) {
  KafkaMock down, healthy;
  down.CreateTopic("webhooks");
  healthy.CreateTopic("webhooks");
  KafkaTransport transport(Short());
  ASSERT_TRUE(WarmUp(transport, down.url(), "evt_0"));
  ASSERT_TRUE(WarmUp(transport, healthy.url(), "evt_0"));
  down.Down();
  Pending slow(transport, Message(down.url(), "evt_1"));
  for (int i = 0; i < 5; ++i) {
    const SendResult fast =
        SendAndWait(transport, Message(healthy.url(), "evt_" + std::to_string(i + 2)));
    EXPECT_TRUE(fast.acknowledged) << fast.error.value_or("");
  }
  EXPECT_FALSE(slow.Ready());
  EXPECT_TRUE(slow.Get().timed_out);
  EXPECT_EQ(slow.calls(), 1);
  std::vector<std::string> landed;
  for (const KafkaRecord& record : healthy.Consume("webhooks")) {
    if (record.key != "evt_0") landed.push_back(record.key.value_or(""));
  }
  EXPECT_EQ(landed, (std::vector<std::string>{"evt_2", "evt_3", "evt_4", "evt_5", "evt_6"}));
}

TEST(KafkaTransportTest, CredentialsStayOutOfErrorsAndADestinationNeedsATopic) {
  KafkaMock kafka;  // no SASL in the mock: the handshake fails, so the message times out
  KafkaTransport transport(Short());
  BrokerSettings broker;
  broker.username = "webhookd";
  broker.password = "s3cret-password";
  const SendResult r = SendAndWait(transport, Message(kafka.url(), "evt_1", broker));
  EXPECT_FALSE(r.acknowledged);
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->find("s3cret"), std::string::npos) << *r.error;

  Outgoing no_topic = Message(kafka.url(), "evt_2");
  no_topic.broker->topic = "";
  EXPECT_EQ(SendAndWait(transport, no_topic).error, "kafka: the destination has no broker.topic");
  EXPECT_FALSE(SendAndWait(transport, Message("redis://127.0.0.1:6379", "evt_3")).acknowledged);
}

TEST(KafkaTransportTest, CancelUnstartedEndsWhatWasNotHandedToLibrdkafka) {
  KafkaMock kafka;
  kafka.CreateTopic("webhooks");
  // The first report holds the producer's thread (where every `done` runs) until the
  // others are queued behind it and cancelled.
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::promise<SendResult> first;
  auto first_result = first.get_future();
  KafkaTransport transport(Loopback());  // after what its callbacks use, so ended first
  transport.Start(Message(kafka.url(), "evt_1"), [&first, released](SendResult r) {
    first.set_value(std::move(r));
    released.wait_for(kReportBound);
  });
  ASSERT_EQ(first_result.wait_for(kReportBound), std::future_status::ready);
  Pending second(transport, Message(kafka.url(), "evt_2"));
  Pending third(transport, Message(kafka.url(), "evt_3"));
  transport.CancelUnstarted();
  release.set_value();
  EXPECT_TRUE(first_result.get().acknowledged);
  EXPECT_TRUE(second.Get().not_started);
  EXPECT_TRUE(third.Get().not_started);
  const std::vector<KafkaRecord> records = kafka.Consume("webhooks");
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].key, "evt_1");
}

// Messages handed to the producer get their attempt's time; those still queued behind
// them end as not started. Either way each `done` is called once, before the destructor
// returns.
TEST(KafkaTransportTest, TheDestructorEndsEveryMessageOnce) {
  KafkaMock kafka;
  kafka.CreateTopic("webhooks");
  std::vector<std::unique_ptr<Pending>> sends;
  std::chrono::steady_clock::time_point destroying;
  {
    KafkaTransport transport(Short());
    ASSERT_TRUE(WarmUp(transport, kafka.url(), "evt_0"));
    kafka.Down();
    for (int i = 1; i <= 6; ++i) {
      if (i == 4) std::this_thread::sleep_for(100ms);  // the first three are handed over
      sends.push_back(
          std::make_unique<Pending>(transport, Message(kafka.url(), "evt_" + std::to_string(i))));
    }
    destroying = std::chrono::steady_clock::now();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - destroying, 2s);  // the 1 s attempts' rest
  for (size_t i = 0; i < sends.size(); ++i) {
    ASSERT_TRUE(sends[i]->Ready()) << "a message without its report after the destructor";
    EXPECT_EQ(sends[i]->calls(), 1);
    const SendResult r = sends[i]->Get();
    EXPECT_FALSE(r.acknowledged);
    EXPECT_TRUE(r.error) << "neither an error nor a confirm";
    if (i < 3) {
      EXPECT_FALSE(r.not_started) << "evt_" << i + 1 << " was handed over";
    }
  }
}

}  // namespace
}  // namespace webhookd::kafka_transport_test
