// The AMQP transport (worker/amqp_transport.h) against real RabbitMQ nodes that the suite
// starts on loopback (two, started once, as a node takes seconds to start): what a message
// holds, the default routing key, unroutable messages and missing exchanges, vhosts,
// refused credentials, a broker stopped and back, the private-address rule, the order of
// a connection's messages, that a hung broker holds up no other, and amqps.
#include "worker/amqp_transport.h"

#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tests/testing/process.h"
#include "tests/testing/rabbitmq_server.h"
#include "tests/testing/test_pki.h"

namespace webhookd::amqp_transport_test {
namespace {

using namespace std::chrono_literals;
using testing::RabbitMqServer;

Outgoing Message(const std::string& url, const std::string& id, BrokerSettings broker = {}) {
  Outgoing out;
  out.url = url;
  out.body = R"({"type":"order.created","data":{"n":1}})";
  out.headers = {{"Content-Type", "application/json"},
                 {"webhook-id", id},
                 {"webhook-timestamp", "1700000000"},
                 {"webhook-signature", "v1,abc"}};
  out.broker = broker;
  return out;
}

BrokerSettings To(const std::string& exchange, std::optional<std::string> routing_key) {
  BrokerSettings broker;
  broker.exchange = exchange;
  broker.routing_key = std::move(routing_key);
  return broker;
}

SendResult SendAndWait(AmqpTransport& transport, Outgoing out) {
  std::promise<SendResult> p;
  auto f = p.get_future();
  transport.Start(std::move(out), [&p](SendResult r) { p.set_value(std::move(r)); });
  if (f.wait_for(30s) != std::future_status::ready) {
    ADD_FAILURE() << "no result within 30 s";
    std::abort();  // the callback still refers to p
  }
  return f.get();
}

// Sends `make()` until it is acknowledged, at most `tries` times 100 ms apart (the
// backoff after a failure makes the first ones fail at once).
SendResult SendUntilAcknowledged(AmqpTransport& transport, const std::function<Outgoing()>& make,
                                 int tries = 100) {
  SendResult r;
  for (int i = 0; i < tries; ++i) {
    r = SendAndWait(transport, make());
    if (r.acknowledged) break;
    std::this_thread::sleep_for(100ms);
  }
  return r;
}

// Answers every name with 127.0.0.1, so that a name the broker's certificate does not
// hold reaches it.
class LoopbackResolver final : public Resolver {
 public:
  Result<std::vector<IpAddress>> Resolve(const std::string&) override {
    return std::vector<IpAddress>{IpAddress::V4(0x7f000001)};
  }
};

AmqpTransport::Options Loopback() {
  AmqpTransport::Options o;
  o.attempt_timeout = 1s;
  o.allow_private = true;
  return o;
}

class AmqpTransportTest : public ::testing::Test {
 protected:
  // The tests that stop or pause a broker: they do it to the spare.
  static bool UsesSpare(std::string_view test) {
    return test == "ABrokerStoppedMidDrainIsAnErrorAndDeliveryResumesWhenItIsBack" ||
           test == "AHungBrokerTimesOutAndHoldsUpNoOtherDestination";
  }

  // The spare is started only when a test that uses it is to run, as ctest runs each test
  // in a process of its own; beside the main one, as each takes seconds.
  static void SetUpTestSuite() {
    bool spare = false;
    const ::testing::TestSuite* suite = ::testing::UnitTest::GetInstance()->current_test_suite();
    for (int i = 0; i < suite->total_test_count(); ++i) {
      const ::testing::TestInfo* test = suite->GetTestInfo(i);
      spare = spare || (test->should_run() && UsesSpare(test->name()));
    }
    std::future<std::unique_ptr<RabbitMqServer>> other;
    if (spare) {
      other = std::async(std::launch::async, [] { return std::make_unique<RabbitMqServer>(); });
    }
    pki_ = new testing::TestPki();
    rabbit_ = new RabbitMqServer(
        {pki_->Path("server.pem"), pki_->Path("server.key"), pki_->Path("ca.pem")});
    if (other.valid()) spare_ = other.get().release();
  }
  static void TearDownTestSuite() {
    delete rabbit_;
    delete spare_;
    delete pki_;
    rabbit_ = spare_ = nullptr;
    pki_ = nullptr;
  }

  static testing::TestPki* pki_;   // the certificate of rabbit_'s amqps listener
  static RabbitMqServer* rabbit_;  // the one every test may use
  static RabbitMqServer* spare_;   // null unless a test that UsesSpare runs
};

testing::TestPki* AmqpTransportTest::pki_ = nullptr;
RabbitMqServer* AmqpTransportTest::rabbit_ = nullptr;
RabbitMqServer* AmqpTransportTest::spare_ = nullptr;

TEST_F(AmqpTransportTest, AMessageArrivesWithItsBodyHeadersAndPropertiesAndTheAckIsTheSuccess) {
  rabbit_->DeclareExchange("orders");
  rabbit_->DeclareQueue("orders-q", "orders", "orders.eu");
  AmqpTransport transport(Loopback());
  const SendResult r =
      SendAndWait(transport, Message(rabbit_->url(), "evt_1", To("orders", "orders.eu")));
  EXPECT_TRUE(r.acknowledged) << r.error.value_or("");
  EXPECT_FALSE(r.error);
  EXPECT_FALSE(r.status_code);
  const auto m = rabbit_->Get("orders-q");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->body, R"({"type":"order.created","data":{"n":1}})");
  EXPECT_EQ(m->exchange, "orders");
  EXPECT_EQ(m->routing_key, "orders.eu");
  EXPECT_EQ(m->content_type, "application/json");
  EXPECT_EQ(m->delivery_mode, 2);
  EXPECT_EQ(m->message_id, "evt_1");
  const std::map<std::string, std::string> headers = {{"content-type", "application/json"},
                                                      {"webhook-id", "evt_1"},
                                                      {"webhook-timestamp", "1700000000"},
                                                      {"webhook-signature", "v1,abc"}};
  EXPECT_EQ(m->headers, headers);
  EXPECT_FALSE(rabbit_->Get("orders-q"));
}

TEST_F(AmqpTransportTest, TheRoutingKeyIsTheEventTypeUnlessGivenAndTheExchangeTheDefault) {
  // The default exchange routes by queue name.
  rabbit_->DeclareQueue("order.created");
  AmqpTransport transport(Loopback());
  const SendResult r = SendAndWait(transport, Message(rabbit_->url(), "evt_1"));
  EXPECT_TRUE(r.acknowledged) << r.error.value_or("");
  const auto m = rabbit_->Get("order.created");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->exchange, "");
  EXPECT_EQ(m->routing_key, "order.created");
  EXPECT_EQ(m->message_id, "evt_1");

  Outgoing untyped = Message(rabbit_->url(), "evt_2");
  untyped.body = R"({"data":{}})";
  const SendResult no_key = SendAndWait(transport, untyped);
  EXPECT_FALSE(no_key.acknowledged);
  EXPECT_TRUE(no_key.error);
}

TEST_F(AmqpTransportTest, AnUnroutableMessageIsARetryableErrorNamingTheReturn) {
  rabbit_->DeclareExchange("lonely");
  rabbit_->DeclareExchange("routed");
  rabbit_->DeclareQueue("routed-q", "routed", "k");
  AmqpTransport transport(Loopback());
  const SendResult r = SendAndWait(transport, Message(rabbit_->url(), "evt_1", To("lonely", "k")));
  EXPECT_FALSE(r.acknowledged);
  EXPECT_FALSE(r.refused);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.error, "amqp: unroutable: NO_ROUTE (312) for exchange 'lonely' routing key 'k'");
  // The same connection goes on: the ack that followed the return was for that message.
  const SendResult next =
      SendAndWait(transport, Message(rabbit_->url(), "evt_2", To("routed", "k")));
  EXPECT_TRUE(next.acknowledged) << next.error.value_or("");
  const auto m = rabbit_->Get("routed-q");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->message_id, "evt_2");
}

TEST_F(AmqpTransportTest, AMissingExchangeIsAnErrorAndTheChannelIsOpenedAgainForTheNext) {
  AmqpTransport transport(Loopback());
  const SendResult missing =
      SendAndWait(transport, Message(rabbit_->url(), "evt_1", To("later", "k")));
  EXPECT_FALSE(missing.acknowledged);
  ASSERT_TRUE(missing.error);
  EXPECT_NE(missing.error->find("NOT_FOUND - no exchange 'later'"), std::string::npos)
      << *missing.error;
  rabbit_->DeclareExchange("later");
  rabbit_->DeclareQueue("later-q", "later", "k");
  // At once: the connection was not lost, so no backoff stands in the way.
  const SendResult next =
      SendAndWait(transport, Message(rabbit_->url(), "evt_2", To("later", "k")));
  EXPECT_TRUE(next.acknowledged) << next.error.value_or("");
  const auto m = rabbit_->Get("later-q");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->message_id, "evt_2");
}

TEST_F(AmqpTransportTest, RefusedCredentialsAreAnErrorInTheBrokersWordsWithoutThePassword) {
  rabbit_->DeclareQueue("order.created");
  AmqpTransport transport(Loopback());
  BrokerSettings wrong;
  wrong.username = "guest";
  wrong.password = "not-the-password";
  const SendResult refused = SendAndWait(transport, Message(rabbit_->url(), "evt_1", wrong));
  EXPECT_FALSE(refused.acknowledged);
  EXPECT_FALSE(refused.refused);  // the address was fine
  ASSERT_TRUE(refused.error);
  EXPECT_NE(refused.error->find("ACCESS_REFUSED"), std::string::npos) << *refused.error;
  EXPECT_EQ(refused.error->find("not-the-password"), std::string::npos) << *refused.error;
  // The right password is another connection (its key names the credentials).
  BrokerSettings right;
  right.username = "guest";
  right.password = "guest";
  const SendResult ok = SendAndWait(transport, Message(rabbit_->url(), "evt_2", right));
  EXPECT_TRUE(ok.acknowledged) << ok.error.value_or("");
  const auto m = rabbit_->Get("order.created");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->message_id, "evt_2");
}

TEST_F(AmqpTransportTest, TheUrlsPathIsTheVhost) {
  rabbit_->DeclareQueue("order.created");
  AmqpTransport transport(Loopback());
  const SendResult slash = SendAndWait(transport, Message(rabbit_->url() + "/%2F", "evt_1"));
  EXPECT_TRUE(slash.acknowledged) << slash.error.value_or("");
  const SendResult missing = SendAndWait(transport, Message(rabbit_->url() + "/nope", "evt_2"));
  EXPECT_FALSE(missing.acknowledged);
  ASSERT_TRUE(missing.error);
  EXPECT_NE(missing.error->find("vhost nope not found"), std::string::npos) << *missing.error;
  const auto m = rabbit_->Get("order.created");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->message_id, "evt_1");
  EXPECT_FALSE(rabbit_->Get("order.created"));
}

TEST_F(AmqpTransportTest, APrivateAddressIsRefusedUnlessAllowed) {
  rabbit_->DeclareQueue("order.created");
  AmqpTransport::Options options = Loopback();
  options.allow_private = false;
  AmqpTransport transport(options);
  const SendResult r = SendAndWait(transport, Message(rabbit_->url(), "evt_1"));
  EXPECT_TRUE(r.refused);
  EXPECT_FALSE(r.acknowledged);
  EXPECT_EQ(r.error, std::string(kAddressNotAllowed));
  EXPECT_FALSE(rabbit_->Get("order.created"));
}

TEST_F(AmqpTransportTest, AConnectionsMessagesKeepTheOrderOfStart) {
  rabbit_->DeclareQueue("order.created");
  AmqpTransport transport(Loopback());
  constexpr int kCount = 50;
  std::mutex mu;
  std::vector<std::string> answered;  // guarded by mu
  std::vector<std::promise<SendResult>> results(kCount);
  for (int i = 0; i < kCount; ++i) {
    const std::string id = "evt_" + std::to_string(i);
    transport.Start(Message(rabbit_->url(), id), [&, id, i](SendResult r) {
      {
        std::lock_guard lock(mu);
        answered.push_back(id);
      }
      results[i].set_value(std::move(r));
    });
  }
  std::vector<std::string> expected;
  for (int i = 0; i < kCount; ++i) {
    auto f = results[i].get_future();
    ASSERT_EQ(f.wait_for(30s), std::future_status::ready);
    const SendResult r = f.get();
    EXPECT_TRUE(r.acknowledged) << i << ": " << r.error.value_or("");
    expected.push_back("evt_" + std::to_string(i));
  }
  {
    std::lock_guard lock(mu);
    EXPECT_EQ(answered, expected);
  }
  std::vector<std::string> arrived;
  while (auto m = rabbit_->Get("order.created")) {
    arrived.push_back(m->message_id);
    if (arrived.size() > kCount) break;
  }
  EXPECT_EQ(arrived, expected);
}

// A window of messages is in flight at once: each confirm settles the messages its
// delivery tag names, and a return fails only the message it brings back, even beside
// one of the same webhook-id on another routing key.
TEST_F(AmqpTransportTest, AWindowOfConfirmsSettlesEachMessageAndAReturnFailsOnlyItsOwn) {
  rabbit_->DeclareExchange("mixed");
  rabbit_->DeclareQueue("mixed-q", "mixed", "ok");
  AmqpTransport transport(Loopback());
  constexpr int kCount = 40;
  std::vector<std::promise<SendResult>> results(kCount);
  for (int i = 0; i < kCount; ++i) {
    // Pairs share an id: the even one is routed, the odd one is not.
    const std::string id = "evt_" + std::to_string(i / 2);
    transport.Start(Message(rabbit_->url(), id, To("mixed", i % 2 == 0 ? "ok" : "nowhere")),
                    [&results, i](SendResult r) { results[i].set_value(std::move(r)); });
  }
  std::vector<std::string> expected;
  for (int i = 0; i < kCount; ++i) {
    auto f = results[i].get_future();
    ASSERT_EQ(f.wait_for(30s), std::future_status::ready);
    const SendResult r = f.get();
    if (i % 2 == 0) {
      EXPECT_TRUE(r.acknowledged) << i << ": " << r.error.value_or("");
      expected.push_back("evt_" + std::to_string(i / 2));
    } else {
      EXPECT_FALSE(r.acknowledged) << i;
      EXPECT_EQ(r.error,
                "amqp: unroutable: NO_ROUTE (312) for exchange 'mixed' routing key 'nowhere'")
          << i;
    }
  }
  std::vector<std::string> arrived;
  while (auto m = rabbit_->Get("mixed-q")) {
    arrived.push_back(m->message_id);
    if (arrived.size() > kCount) break;
  }
  EXPECT_EQ(arrived, expected);
}

TEST_F(AmqpTransportTest, ABrokerStoppedMidDrainIsAnErrorAndDeliveryResumesWhenItIsBack) {
  ASSERT_TRUE(spare_) << "UsesSpare names this test";
  spare_->DeclareQueue("order.created");
  AmqpTransport::Options options = Loopback();
  options.window = 1;  // so that the rest wait for the first one's confirm, and the stop
  AmqpTransport transport(options);
  ASSERT_TRUE(SendAndWait(transport, Message(spare_->url(), "evt_0")).acknowledged);
  // The broker dies between the first message of a batch and the rest.
  constexpr int kCount = 5;
  std::vector<std::promise<SendResult>> results(kCount);
  for (int i = 0; i < kCount; ++i) {
    transport.Start(Message(spare_->url(), "evt_" + std::to_string(i + 1)), [&, i](SendResult r) {
      if (i == 0) spare_->Stop();
      results[i].set_value(std::move(r));
    });
  }
  for (int i = 0; i < kCount; ++i) {
    auto f = results[i].get_future();
    ASSERT_EQ(f.wait_for(60s), std::future_status::ready);
    const SendResult r = f.get();
    if (i == 0) continue;  // sent before the stop
    EXPECT_FALSE(r.acknowledged) << i;
    ASSERT_TRUE(r.error) << i;
    EXPECT_EQ(r.error->rfind("amqp: ", 0), 0u) << *r.error;
  }
  ASSERT_TRUE(spare_->Start());
  spare_->DeclareQueue("order.created");  // the new node's data held no queue of ours
  const SendResult back =
      SendUntilAcknowledged(transport, [&] { return Message(spare_->url(), "evt_back"); });
  EXPECT_TRUE(back.acknowledged) << back.error.value_or("");
  const auto m = spare_->Get("order.created");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->message_id, "evt_back");
}

TEST_F(AmqpTransportTest, AHungBrokerTimesOutAndHoldsUpNoOtherDestination) {
  ASSERT_TRUE(spare_) << "UsesSpare names this test";
  rabbit_->DeclareQueue("order.created");
  spare_->DeclareQueue("order.created");
  AmqpTransport::Options options = Loopback();
  options.window = 1;  // so that evt_1b waits behind evt_1 rather than joining it
  AmqpTransport transport(options);
  ASSERT_TRUE(SendAndWait(transport, Message(spare_->url(), "evt_0")).acknowledged);
  spare_->Pause();
  std::promise<SendResult> slow;
  auto slow_result = slow.get_future();
  const auto started = std::chrono::steady_clock::now();
  transport.Start(Message(spare_->url(), "evt_1"),
                  [&slow](SendResult r) { slow.set_value(std::move(r)); });
  // Queued behind it, and handed back unsent.
  std::promise<SendResult> queued;
  auto queued_result = queued.get_future();
  transport.Start(Message(spare_->url(), "evt_1b"),
                  [&queued](SendResult r) { queued.set_value(std::move(r)); });
  // The healthy broker answers, and a port where nothing listens fails, while the hung
  // one waits out its timeout.
  const SendResult fast = SendAndWait(transport, Message(rabbit_->url(), "evt_2"));
  EXPECT_TRUE(fast.acknowledged) << fast.error.value_or("");
  const std::string nowhere = "amqp://127.0.0.1:" + std::to_string(testing::FreePort());
  const SendResult refused = SendAndWait(transport, Message(nowhere, "evt_3"));
  EXPECT_FALSE(refused.acknowledged);
  EXPECT_TRUE(refused.error);
  EXPECT_EQ(slow_result.wait_for(0s), std::future_status::timeout);
  // evt_1 is on the network by now (the sends above took longer than taking it up).
  transport.CancelUnstarted();
  ASSERT_EQ(slow_result.wait_for(10s), std::future_status::ready);
  const SendResult timed_out = slow_result.get();
  EXPECT_GE(std::chrono::steady_clock::now() - started, 900ms);
  EXPECT_TRUE(timed_out.timed_out) << timed_out.error.value_or("");
  EXPECT_FALSE(timed_out.acknowledged);
  EXPECT_FALSE(timed_out.not_started);
  ASSERT_EQ(queued_result.wait_for(10s), std::future_status::ready);
  EXPECT_TRUE(queued_result.get().not_started);
  spare_->Resume();
  // The connection was dropped; a new one is made after the backoff.
  const SendResult back =
      SendUntilAcknowledged(transport, [&] { return Message(spare_->url(), "evt_4"); });
  EXPECT_TRUE(back.acknowledged) << back.error.value_or("");
}

TEST_F(AmqpTransportTest, AmqpsTrustsTheDestinationsCaAndChecksTheBrokersName) {
  rabbit_->DeclareQueue("order.created");
  LoopbackResolver resolver;
  AmqpTransport::Options options = Loopback();
  options.resolver = &resolver;
  AmqpTransport transport(options);
  const std::string port = std::to_string(rabbit_->tls_port());
  DestinationTls ca;
  ca.ca_certificate = pki_->Pem("ca.pem");
  Outgoing trusted = Message("amqps://localhost:" + port, "evt_1");
  trusted.tls = ca;
  const SendResult ok = SendAndWait(transport, trusted);
  EXPECT_TRUE(ok.acknowledged) << ok.error.value_or("");
  // The system's CAs do not know the test's.
  const SendResult unknown = SendAndWait(transport, Message("amqps://localhost:" + port, "evt_2"));
  EXPECT_FALSE(unknown.acknowledged);
  EXPECT_TRUE(unknown.error);
  // The certificate names 127.0.0.1 and localhost, not this.
  Outgoing misnamed = Message("amqps://broker.example:" + port, "evt_3");
  misnamed.tls = ca;
  const SendResult wrong_name = SendAndWait(transport, misnamed);
  EXPECT_FALSE(wrong_name.acknowledged);
  EXPECT_TRUE(wrong_name.error);
  const auto m = rabbit_->Get("order.created");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->message_id, "evt_1");
  EXPECT_FALSE(rabbit_->Get("order.created"));
}

}  // namespace
}  // namespace webhookd::amqp_transport_test
