// The NATS JetStream transport (worker/nats_transport.h) against real nats-servers that
// the test starts on loopback: what a stored message holds, the default subject, the
// duplicate window, no stream for the subject, answers from more than the stream, a body
// over max_payload, refused credentials, a server stopped and back, the private-address
// rule, a hung server, the order of one connection's sends, CancelUnstarted, TLS, and
// that libnats's connection threads end with the transport.
#include "worker/nats_transport.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <nats/nats.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <future>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "tests/testing/nats_server.h"
#include "tests/testing/raw_listener.h"
#include "tests/testing/test_pki.h"
#include "tests/testing/wait.h"

namespace webhookd::nats_transport_test {
namespace {

using namespace std::chrono_literals;
using testing::NatsServer;

constexpr auto kResultWait = 10s;

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

// The result of a send started now, waited for at most kResultWait.
std::future<SendResult> StartSend(NatsTransport& transport, Outgoing out) {
  auto promise = std::make_shared<std::promise<SendResult>>();
  auto future = promise->get_future();
  transport.Start(std::move(out), [promise](SendResult r) { promise->set_value(std::move(r)); });
  return future;
}

SendResult Wait(std::future<SendResult>& future) {
  if (future.wait_for(kResultWait) != std::future_status::ready) {
    ADD_FAILURE() << "no result within " << kResultWait.count() << " s";
    SendResult r;
    r.error = "test: no result";
    return r;
  }
  return future.get();
}

SendResult SendAndWait(NatsTransport& transport, Outgoing out) {
  auto future = StartSend(transport, std::move(out));
  return Wait(future);
}

NatsTransport::Options Loopback() {
  NatsTransport::Options o;
  o.attempt_timeout = 1s;
  o.allow_private = true;
  return o;
}

size_t ThreadCount() {
  return static_cast<size_t>(std::distance(std::filesystem::directory_iterator("/proc/self/task"),
                                           std::filesystem::directory_iterator{}));
}

std::vector<std::string> IdsOf(const std::vector<testing::StoredMessage>& messages) {
  std::vector<std::string> ids;
  for (const auto& m : messages) {
    auto it = m.headers.find("Nats-Msg-Id");
    ids.push_back(it == m.headers.end() ? "" : it->second);
  }
  return ids;
}

TEST(NatsTransportTest, AMessageIsStoredWithItsBodyAndHeadersAndThePubAckIsTheSuccess) {
  NatsServer nats;
  ASSERT_TRUE(nats.AddStream("ORDERS", {"orders.>"}));
  NatsTransport transport(Loopback());
  BrokerSettings broker;
  broker.subject = "orders.created";
  const SendResult r = SendAndWait(transport, Message(nats.url(), "evt_1", broker));
  EXPECT_TRUE(r.acknowledged) << r.error.value_or("");
  EXPECT_FALSE(r.error);
  EXPECT_FALSE(r.status_code);
  EXPECT_EQ(nlohmann::json::parse(r.body), nlohmann::json({{"stream", "ORDERS"}, {"seq", 1}}));
  const auto messages = nats.Messages("ORDERS");
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_EQ(messages[0].subject, "orders.created");
  EXPECT_EQ(messages[0].data, R"({"type":"order.created","data":{"n":1}})");
  const std::multimap<std::string, std::string> expected = {{"Content-Type", "application/json"},
                                                            {"webhook-id", "evt_1"},
                                                            {"webhook-timestamp", "1700000000"},
                                                            {"webhook-signature", "v1,abc"},
                                                            {"Nats-Msg-Id", "evt_1"}};
  EXPECT_EQ(messages[0].headers, expected);
}

TEST(NatsTransportTest, WithoutASubjectItIsWebhooksDotTheEventType) {
  NatsServer nats;
  ASSERT_TRUE(nats.AddStream("WEBHOOKS", {"webhooks.>"}));
  NatsTransport transport(Loopback());
  const SendResult r = SendAndWait(transport, Message(nats.url(), "evt_1"));
  EXPECT_TRUE(r.acknowledged) << r.error.value_or("");
  const auto messages = nats.Messages("WEBHOOKS");
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_EQ(messages[0].subject, "webhooks.order.created");

  // No subject to make: an error, and nothing published.
  Outgoing untyped = Message(nats.url(), "evt_2");
  untyped.body = R"({"data":{"n":2}})";
  const SendResult no_type = SendAndWait(transport, untyped);
  EXPECT_FALSE(no_type.acknowledged);
  EXPECT_EQ(no_type.error,
            "nats: the destination has no broker.subject and the body no string \"type\"");
  Outgoing wildcard = Message(nats.url(), "evt_3");
  wildcard.body = R"({"type":"order.>"})";
  EXPECT_FALSE(SendAndWait(transport, wildcard).acknowledged);
  EXPECT_EQ(nats.Messages("WEBHOOKS").size(), 1u);
}

TEST(NatsTransportTest, TheSameWebhookIdTwiceIsStoredOnceAndBothAreAcknowledged) {
  NatsServer nats;
  ASSERT_TRUE(nats.AddStream("WEBHOOKS", {"webhooks.>"}));
  NatsTransport transport(Loopback());
  const SendResult first = SendAndWait(transport, Message(nats.url(), "evt_1"));
  const SendResult again = SendAndWait(transport, Message(nats.url(), "evt_1"));
  const SendResult other = SendAndWait(transport, Message(nats.url(), "evt_2"));
  EXPECT_TRUE(first.acknowledged) << first.error.value_or("");
  EXPECT_TRUE(again.acknowledged) << again.error.value_or("");
  EXPECT_TRUE(other.acknowledged) << other.error.value_or("");
  EXPECT_EQ(nlohmann::json::parse(again.body),
            nlohmann::json({{"stream", "WEBHOOKS"}, {"seq", 1}, {"duplicate", true}}));
  EXPECT_EQ(IdsOf(nats.Messages("WEBHOOKS")), (std::vector<std::string>{"evt_1", "evt_2"}));
}

TEST(NatsTransportTest, NoStreamForTheSubjectIsARetryableErrorAndTheConnectionStays) {
  NatsServer nats;
  NatsTransport transport(Loopback());
  const SendResult r = SendAndWait(transport, Message(nats.url(), "evt_1"));
  EXPECT_FALSE(r.acknowledged);
  EXPECT_FALSE(r.refused);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.error, "nats: no stream for subject 'webhooks.order.created'");
  // Not a connection failure: no backoff, the next try goes through at once.
  ASSERT_TRUE(nats.AddStream("WEBHOOKS", {"webhooks.>"}));
  const SendResult retried = SendAndWait(transport, Message(nats.url(), "evt_1"));
  EXPECT_TRUE(retried.acknowledged) << retried.error.value_or("");
}

// A service that answers every message on `subject` with "hello", beside the stream.
class Responder {
 public:
  Responder(const NatsServer& server, const std::string& subject) {
    EXPECT_EQ(natsConnection_ConnectTo(&nc_, server.url().c_str()), NATS_OK);
    EXPECT_EQ(natsConnection_Subscribe(&sub_, nc_, subject.c_str(), &Answer, nullptr), NATS_OK);
    EXPECT_EQ(natsConnection_Flush(nc_), NATS_OK);
  }
  ~Responder() {
    natsSubscription_Destroy(sub_);
    natsConnection_Destroy(nc_);
  }

 private:
  static void Answer(natsConnection* nc, natsSubscription*, natsMsg* msg, void*) {
    natsConnection_PublishString(nc, natsMsg_GetReply(msg), "hello");
    natsMsg_Destroy(msg);
  }
  natsConnection* nc_ = nullptr;
  natsSubscription* sub_ = nullptr;
};

TEST(NatsTransportTest, AnAnswerIsTakenOnlyForItsOwnRequest) {
  NatsServer nats;
  ASSERT_TRUE(nats.AddStream("WEBHOOKS", {"webhooks.>"}));
  Responder responder(nats, "webhooks.>");
  NatsTransport transport(Loopback());
  // Each message gets two answers: whichever comes first is its result, and the other
  // must not become the next message's.
  for (uint64_t i = 1; i <= 10; ++i) {
    const SendResult r = SendAndWait(transport, Message(nats.url(), "evt_" + std::to_string(i)));
    if (r.acknowledged) {
      EXPECT_EQ(nlohmann::json::parse(r.body).value("seq", uint64_t{0}), i) << r.body;
    } else {
      EXPECT_EQ(r.error,
                "nats: the answer on subject 'webhooks.order.created' is not a JetStream PubAck");
    }
  }
  EXPECT_EQ(nats.Messages("WEBHOOKS").size(), 10u);
}

TEST(NatsTransportTest, ABodyOverTheServersMaxPayloadIsAnErrorAndTheConnectionStays) {
  NatsServer nats;
  ASSERT_TRUE(nats.AddStream("WEBHOOKS", {"webhooks.>"}));
  NatsTransport transport(Loopback());
  Outgoing big = Message(nats.url(), "evt_1");
  big.body = R"({"type":"order.created","data":")" + std::string(2 << 20, 'x') + R"("})";
  const SendResult r = SendAndWait(transport, big);
  EXPECT_FALSE(r.acknowledged);
  ASSERT_TRUE(r.error);
  EXPECT_NE(r.error->find("greater than maximum allowed"), std::string::npos) << *r.error;
  const SendResult next = SendAndWait(transport, Message(nats.url(), "evt_2"));
  EXPECT_TRUE(next.acknowledged) << next.error.value_or("");
}

TEST(NatsTransportTest, RefusedCredentialsAreAnErrorInTheServersWordsWithoutThePassword) {
  NatsServer::Options auth;
  auth.user = "webhookd";
  auth.password = "s3cret";
  NatsServer nats(auth);
  ASSERT_TRUE(nats.AddStream("WEBHOOKS", {"webhooks.>"}));
  NatsTransport transport(Loopback());
  BrokerSettings wrong;
  wrong.username = "webhookd";
  wrong.password = "wr0ng-pa55";
  const SendResult refused = SendAndWait(transport, Message(nats.url(), "evt_1", wrong));
  EXPECT_FALSE(refused.acknowledged);
  ASSERT_TRUE(refused.error);
  EXPECT_EQ(*refused.error, "nats: Authorization Violation");
  EXPECT_EQ(refused.error->find("wr0ng-pa55"), std::string::npos) << "the password in an error";
  const SendResult unauthenticated = SendAndWait(transport, Message(nats.url(), "evt_2"));
  EXPECT_FALSE(unauthenticated.acknowledged);
  // The right password is another connection (its key names the credentials).
  BrokerSettings right;
  right.username = "webhookd";
  right.password = "s3cret";
  const SendResult ok = SendAndWait(transport, Message(nats.url(), "evt_3", right));
  EXPECT_TRUE(ok.acknowledged) << ok.error.value_or("");
  EXPECT_EQ(IdsOf(nats.Messages("WEBHOOKS")), std::vector<std::string>{"evt_3"});
}

TEST(NatsTransportTest, APasswordWithoutAUsernameIsAToken) {
  NatsServer::Options auth;
  auth.token = "t0ken";
  NatsServer nats(auth);
  ASSERT_TRUE(nats.AddStream("WEBHOOKS", {"webhooks.>"}));
  NatsTransport transport(Loopback());
  BrokerSettings wrong;
  wrong.password = "not-it";
  const SendResult refused = SendAndWait(transport, Message(nats.url(), "evt_1", wrong));
  EXPECT_EQ(refused.error, "nats: Authorization Violation");
  BrokerSettings right;
  right.password = "t0ken";
  const SendResult ok = SendAndWait(transport, Message(nats.url(), "evt_2", right));
  EXPECT_TRUE(ok.acknowledged) << ok.error.value_or("");
  EXPECT_EQ(IdsOf(nats.Messages("WEBHOOKS")), std::vector<std::string>{"evt_2"});
}

TEST(NatsTransportTest, AServerStoppedMidDrainIsAnErrorAndItsMessagesGoThroughOnceItIsBack) {
  NatsServer nats;
  ASSERT_TRUE(nats.AddStream("WEBHOOKS", {"webhooks.>"}));
  NatsTransport transport(Loopback());
  ASSERT_TRUE(SendAndWait(transport, Message(nats.url(), "evt_0")).acknowledged);
  nats.Stop();
  std::vector<std::future<SendResult>> futures;
  for (int i = 1; i <= 3; ++i) {
    futures.push_back(StartSend(transport, Message(nats.url(), "evt_" + std::to_string(i))));
  }
  for (auto& future : futures) {
    const SendResult lost = Wait(future);
    EXPECT_FALSE(lost.acknowledged);
    ASSERT_TRUE(lost.error);
    EXPECT_EQ(lost.error->rfind("nats: ", 0), 0u) << *lost.error;
  }
  ASSERT_TRUE(nats.Start());
  // Within the backoff a message fails at once; after it, the connection is made again.
  for (int i = 1; i <= 3; ++i) {
    SendResult back;
    for (int tries = 0; tries < 50 && !back.acknowledged; ++tries) {
      back = SendAndWait(transport, Message(nats.url(), "evt_" + std::to_string(i)));
      if (!back.acknowledged) std::this_thread::sleep_for(100ms);
    }
    EXPECT_TRUE(back.acknowledged) << back.error.value_or("");
  }
  // The store outlived the server: the first message and the three resent, each once.
  EXPECT_EQ(IdsOf(nats.Messages("WEBHOOKS")),
            (std::vector<std::string>{"evt_0", "evt_1", "evt_2", "evt_3"}));
}

TEST(NatsTransportTest, APrivateAddressIsRefusedWithoutConnecting) {
  testing::RawListener listener("127.0.0.1", 0, [](testing::RawConnection&) {});
  NatsTransport::Options options = Loopback();
  options.allow_private = false;
  NatsTransport transport(options);
  const SendResult r =
      SendAndWait(transport, Message("nats://127.0.0.1:" + std::to_string(listener.port()), "e"));
  EXPECT_TRUE(r.refused);
  EXPECT_FALSE(r.acknowledged);
  EXPECT_EQ(r.error, std::string(kAddressNotAllowed));
  EXPECT_EQ(listener.accepted(), 0);
}

TEST(NatsTransportTest, AHungServerTimesOutAndHoldsUpNoOtherDestination) {
  NatsServer hung, healthy;
  ASSERT_TRUE(hung.AddStream("WEBHOOKS", {"webhooks.>"}));
  ASSERT_TRUE(healthy.AddStream("WEBHOOKS", {"webhooks.>"}));
  NatsTransport transport(Loopback());
  ASSERT_TRUE(SendAndWait(transport, Message(hung.url(), "evt_0")).acknowledged);
  hung.Pause();
  const auto started = std::chrono::steady_clock::now();
  auto slow = StartSend(transport, Message(hung.url(), "evt_1"));
  // The healthy one answers while the hung one waits out its timeout.
  const SendResult fast = SendAndWait(transport, Message(healthy.url(), "evt_2"));
  EXPECT_TRUE(fast.acknowledged) << fast.error.value_or("");
  EXPECT_EQ(slow.wait_for(0s), std::future_status::timeout);
  const SendResult timed_out = Wait(slow);
  const auto waited = std::chrono::steady_clock::now() - started;
  EXPECT_GE(waited, 900ms);
  EXPECT_LT(waited, 5s);
  EXPECT_TRUE(timed_out.timed_out) << timed_out.error.value_or("");
  EXPECT_FALSE(timed_out.acknowledged);
  hung.Resume();
}

// A server that asks for TLS and then stalls the handshake: libnats would wait on it
// without end, so the attempt ends at its deadline, the next ones fail at once without a
// second thread, and the transport is destroyed without waiting for the server.
TEST(NatsTransportTest, AHandshakeThatStallsEndsAtTheDeadlineAndHoldsUpNothing) {
  auto stalls =
      std::make_unique<testing::RawListener>("127.0.0.1", 0, [](testing::RawConnection& c) {
        c.Write(R"(INFO {"server_id":"x","version":"2.9.10","proto":1,"headers":true,)"
                R"("max_payload":1048576,"tls_required":true})"
                "\r\n");
        c.WaitForPeerClose();
      });
  const std::string url = "tls://127.0.0.1:" + std::to_string(stalls->port());
  NatsServer healthy;
  ASSERT_TRUE(healthy.AddStream("WEBHOOKS", {"webhooks.>"}));
  const auto started = std::chrono::steady_clock::now();
  {
    NatsTransport transport(Loopback());
    const SendResult stalled = SendAndWait(transport, Message(url, "evt_1"));
    EXPECT_TRUE(stalled.timed_out) << stalled.error.value_or("");
    EXPECT_NE(stalled.error.value_or("").find("handshake"), std::string::npos)
        << stalled.error.value_or("");
    EXPECT_LT(std::chrono::steady_clock::now() - started, 5s);
    EXPECT_TRUE(SendAndWait(transport, Message(healthy.url(), "evt_2")).acknowledged);
    // After the backoff: still one connect waiting on the server, not two.
    std::this_thread::sleep_for(200ms);
    const SendResult again = SendAndWait(transport, Message(url, "evt_3"));
    EXPECT_FALSE(again.acknowledged);
    EXPECT_EQ(stalls->accepted(), 1);
  }
  EXPECT_LT(std::chrono::steady_clock::now() - started, 8s);
  EXPECT_EQ(NatsTransport::AbandonedConnects(), 1) << "the connect still waits on the server";
  // The server lets go: the abandoned connect ends, here rather than while the process
  // exits.
  stalls.reset();
  EXPECT_TRUE(testing::WaitUntil([] { return NatsTransport::AbandonedConnects() == 0; }, 10s));
}

TEST(NatsTransportTest, TheMessagesOfOneConnectionAreSentInStartOrder) {
  NatsServer nats;
  ASSERT_TRUE(nats.AddStream("WEBHOOKS", {"webhooks.>"}));
  NatsTransport transport(Loopback());
  std::vector<std::string> ids;
  std::vector<std::future<SendResult>> futures;
  for (int i = 0; i < 30; ++i) {
    ids.push_back("evt_" + std::to_string(i));
    futures.push_back(StartSend(transport, Message(nats.url(), ids.back())));
  }
  for (size_t i = 0; i < futures.size(); ++i) {
    const SendResult r = Wait(futures[i]);
    EXPECT_TRUE(r.acknowledged) << r.error.value_or("");
    EXPECT_EQ(nlohmann::json::parse(r.body).value("seq", 0u), i + 1);
  }
  EXPECT_EQ(IdsOf(nats.Messages("WEBHOOKS")), ids);
}

// Requests share a window only when they share a subject, so that "no responders", which
// names no request, fails the one it is for: here every other one.
TEST(NatsTransportTest, RequestsToSubjectsWithAndWithoutAStreamAreEachAnsweredForThemselves) {
  NatsServer nats;
  ASSERT_TRUE(nats.AddStream("ORDERS", {"orders.>"}));
  NatsTransport transport(Loopback());
  std::vector<std::future<SendResult>> futures;
  std::vector<std::string> stored;
  for (int i = 0; i < 40; ++i) {
    BrokerSettings broker;
    broker.subject = i % 3 == 0 ? "nowhere.x" : "orders.x";
    const std::string id = "evt_" + std::to_string(i);
    if (i % 3 != 0) stored.push_back(id);
    futures.push_back(StartSend(transport, Message(nats.url(), id, broker)));
  }
  for (size_t i = 0; i < futures.size(); ++i) {
    const SendResult r = Wait(futures[i]);
    if (i % 3 == 0) {
      EXPECT_EQ(r.error, "nats: no stream for subject 'nowhere.x'") << i;
    } else {
      EXPECT_TRUE(r.acknowledged) << i << ": " << r.error.value_or("");
    }
  }
  EXPECT_EQ(IdsOf(nats.Messages("ORDERS")), stored);
}

// A hostile server: it answers the handshake, then sends messages on the client's first
// subscription (its inbox) without end, none of them an answer to anything; for at most
// 10 s, until the client hangs up.
class Flooder {
 public:
  Flooder() {
    listener_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(bind(listener_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    EXPECT_EQ(listen(listener_, 4), 0);
    socklen_t len = sizeof(addr);
    getsockname(listener_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { Serve(); });
  }
  ~Flooder() {
    shutdown(listener_, SHUT_RDWR);
    thread_.join();
    close(listener_);
  }
  Flooder(const Flooder&) = delete;
  Flooder& operator=(const Flooder&) = delete;

  std::string url() const { return "nats://127.0.0.1:" + std::to_string(port_); }

 private:
  void Serve() {
    const int fd = accept(listener_, nullptr, nullptr);
    if (fd < 0) return;
    const std::string info = R"(INFO {"server_id":"x","version":"2.9.10","proto":1,"headers":true,)"
                             R"("max_payload":1048576})"
                             "\r\n";
    send(fd, info.data(), info.size(), MSG_NOSIGNAL);
    std::string seen;
    char buf[4096];
    while (seen.find("PING\r\n") == std::string::npos) {
      const ssize_t n = recv(fd, buf, sizeof(buf), 0);
      if (n <= 0) {
        close(fd);
        return;
      }
      seen.append(buf, static_cast<size_t>(n));
    }
    send(fd, "PONG\r\n", 6, MSG_NOSIGNAL);
    std::string flood;
    for (int i = 0; i < 200; ++i) flood += "MSG nobody.1 1 2\r\nhi\r\n";
    const auto end = std::chrono::steady_clock::now() + 10s;
    while (std::chrono::steady_clock::now() < end) {
      if (send(fd, flood.data(), flood.size(), MSG_NOSIGNAL) <= 0) break;
      recv(fd, buf, sizeof(buf), MSG_DONTWAIT);  // the client's SUB, PUB and the like
      std::this_thread::sleep_for(1ms);          // as fast as the client reads, not past its limits
    }
    close(fd);
  }

  int listener_ = -1;
  int port_ = 0;
  std::thread thread_;
};

// A server that floods the connection with messages answering nothing holds its message no
// longer than the attempt timeout: the reading of answers stops at each deadline.
TEST(NatsTransportTest, AServerThatSendsWithoutEndHoldsAMessageNoLongerThanItsDeadline) {
  Flooder flooder;
  const auto started = std::chrono::steady_clock::now();
  {
    NatsTransport transport(Loopback());
    BrokerSettings broker;
    broker.subject = "orders.x";
    const SendResult r = SendAndWait(transport, Message(flooder.url(), "evt_1", broker));
    EXPECT_FALSE(r.acknowledged);
    EXPECT_TRUE(r.error) << "answered by the flood";
    EXPECT_LT(std::chrono::steady_clock::now() - started, 4s) << r.error.value_or("");
  }
  EXPECT_LT(std::chrono::steady_clock::now() - started, 6s);
}

TEST(NatsTransportTest, CancelUnstartedEndsTheQueuedMessagesWithNotStarted) {
  NatsServer nats;
  ASSERT_TRUE(nats.AddStream("WEBHOOKS", {"webhooks.>"}));
  NatsTransport::Options options = Loopback();
  options.window = 1;  // so that evt_2 waits behind evt_1
  NatsTransport transport(options);
  ASSERT_TRUE(SendAndWait(transport, Message(nats.url(), "evt_0")).acknowledged);
  nats.Pause();
  auto in_flight = StartSend(transport, Message(nats.url(), "evt_1"));
  std::this_thread::sleep_for(200ms);  // evt_1 is on the wire by then
  auto queued = StartSend(transport, Message(nats.url(), "evt_2"));
  transport.CancelUnstarted();
  const SendResult cancelled = Wait(queued);
  EXPECT_TRUE(cancelled.not_started);
  EXPECT_FALSE(cancelled.acknowledged);
  EXPECT_TRUE(Wait(in_flight).timed_out);
  nats.Resume();
}

TEST(NatsTransportTest, TlsAgainstAServerWithoutItIsAnError) {
  NatsServer nats;
  ASSERT_TRUE(nats.AddStream("WEBHOOKS", {"webhooks.>"}));
  NatsTransport transport(Loopback());
  const SendResult r =
      SendAndWait(transport, Message("tls://127.0.0.1:" + std::to_string(nats.port()), "evt_1"));
  EXPECT_FALSE(r.acknowledged);
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->rfind("nats: ", 0), 0u) << *r.error;
  EXPECT_TRUE(nats.Messages("WEBHOOKS").empty());
}

// Every name is 127.0.0.1.
class LoopbackResolver final : public Resolver {
 public:
  Result<std::vector<IpAddress>> Resolve(const std::string&) override {
    return std::vector<IpAddress>{IpAddress::V4(0x7F000001)};
  }
};

// OpenSSL's "system CAs" are SSL_CERT_FILE's when it is set: the test CA, for one scope.
class SystemCaFile {
 public:
  explicit SystemCaFile(const std::string& path) { ::setenv("SSL_CERT_FILE", path.c_str(), 1); }
  ~SystemCaFile() { ::unsetenv("SSL_CERT_FILE"); }
};

TEST(NatsTransportTest, TlsChecksTheServerAgainstTheSystemsCasAndTheUrlsHost) {
  testing::TestPki pki;
  NatsServer::Options tls;
  tls.tls_cert = pki.Path("server.pem");
  tls.tls_key = pki.Path("server.key");
  NatsServer nats(tls);
  ASSERT_TRUE(nats.AddStream("WEBHOOKS", {"webhooks.>"}));
  const std::string port = std::to_string(nats.port());
  {
    NatsTransport transport(Loopback());
    const SendResult untrusted =
        SendAndWait(transport, Message("tls://localhost:" + port, "evt_1"));
    EXPECT_FALSE(untrusted.acknowledged);
    ASSERT_TRUE(untrusted.error);
    EXPECT_NE(untrusted.error->find("SSL handshake error"), std::string::npos) << *untrusted.error;
  }
  SystemCaFile ca(pki.Path("ca.pem"));
  LoopbackResolver resolver;
  NatsTransport::Options options = Loopback();
  options.resolver = &resolver;
  NatsTransport transport(options);
  // The certificate names localhost and 127.0.0.1; it is checked against either.
  const SendResult by_name = SendAndWait(transport, Message("tls://localhost:" + port, "evt_2"));
  EXPECT_TRUE(by_name.acknowledged) << by_name.error.value_or("");
  const SendResult by_address = SendAndWait(transport, Message("tls://127.0.0.1:" + port, "evt_3"));
  EXPECT_TRUE(by_address.acknowledged) << by_address.error.value_or("");
  // Connected to by its address, the server must still prove the URL's name.
  const SendResult other_name = SendAndWait(transport, Message("tls://nats.test:" + port, "evt_4"));
  EXPECT_FALSE(other_name.acknowledged);
  ASSERT_TRUE(other_name.error);
  EXPECT_NE(other_name.error->find("hostname mismatch"), std::string::npos) << *other_name.error;
  EXPECT_EQ(IdsOf(nats.Messages("WEBHOOKS")), (std::vector<std::string>{"evt_2", "evt_3"}));
}

TEST(NatsTransportTest, LibnatssConnectionThreadsEndWithTheTransport) {
  NatsServer a, b;
  ASSERT_TRUE(a.AddStream("WEBHOOKS", {"webhooks.>"}));
  ASSERT_TRUE(b.AddStream("WEBHOOKS", {"webhooks.>"}));
  // libnats's threads of the process (its timers, callbacks) were started by the fixture.
  const size_t before = ThreadCount();
  {
    NatsTransport transport(Loopback());
    ASSERT_TRUE(SendAndWait(transport, Message(a.url(), "evt_1")).acknowledged);
    ASSERT_TRUE(SendAndWait(transport, Message(b.url(), "evt_2")).acknowledged);
    EXPECT_GT(ThreadCount(), before);
  }
  EXPECT_TRUE(testing::WaitUntil([&] { return ThreadCount() <= before; }, 2s))
      << ThreadCount() << " threads, " << before << " before the transport";
}

}  // namespace
}  // namespace webhookd::nats_transport_test
