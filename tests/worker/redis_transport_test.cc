// The Redis Streams transport (worker/redis_transport.h) against real redis-servers that
// the test starts on loopback: what an entry holds, a broker stopped and back, refused
// credentials, the private-address rule, and that a hung Redis holds up no other.
#include "worker/redis_transport.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <hiredis/hiredis.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <future>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tests/testing/redis_server.h"

namespace webhookd::redis_transport_test {
namespace {

using namespace std::chrono_literals;

using testing::RedisServer;

Outgoing Message(const std::string& url, const std::string& id, BrokerSettings broker = {}) {
  Outgoing out;
  out.url = url;
  out.body = R"({"type":"order.created","data":{"n":1}})";
  out.headers = {{"Content-Type", "application/json"},
                 {"webhook-id", id},
                 {"webhook-timestamp", "1700000000"},
                 {"webhook-signature", "v1,abc"}};
  if (!broker.stream) broker.stream = "webhooks";
  out.broker = broker;
  return out;
}

SendResult SendAndWait(RedisTransport& transport, Outgoing out) {
  std::promise<SendResult> p;
  auto f = p.get_future();
  transport.Start(std::move(out), [&p](SendResult r) { p.set_value(std::move(r)); });
  return f.get();
}

RedisTransport::Options Loopback() {
  RedisTransport::Options o;
  o.attempt_timeout = 1s;
  o.allow_private = true;
  return o;
}

TEST(RedisTransportTest, AMessageIsOneEntryOfItsBodyAndHeadersAndItsIdIsTheSuccess) {
  RedisServer redis;
  RedisTransport transport(Loopback());
  BrokerSettings broker;
  broker.stream = "orders";
  broker.max_len = 1000;
  const SendResult r = SendAndWait(transport, Message(redis.url(), "evt_1", broker));
  EXPECT_TRUE(r.acknowledged) << r.error.value_or("");
  EXPECT_FALSE(r.error);
  EXPECT_FALSE(r.status_code);
  EXPECT_NE(r.body.find('-'), std::string::npos) << r.body;  // "1700000000000-0"
  const auto entries = redis.Entries("orders");
  ASSERT_EQ(entries.size(), 1u);
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"body", R"({"type":"order.created","data":{"n":1}})"},
      {"content-type", "application/json"},
      {"webhook-id", "evt_1"},
      {"webhook-timestamp", "1700000000"},
      {"webhook-signature", "v1,abc"}};
  EXPECT_EQ(entries[0], expected);
}

// A window of XADDs is pipelined; the replies, in order, answer the messages in the
// order they were started, and an error reply fails only its own.
TEST(RedisTransportTest, PipelinedMessagesAreAnsweredInOrderEachByItsOwnReply) {
  RedisServer redis;
  RedisTransport transport(Loopback());
  std::vector<std::promise<SendResult>> results(50);
  std::vector<std::string> stored;
  for (int i = 0; i < 50; ++i) {
    BrokerSettings broker;
    // MAXLEN of a negative number is an error reply.
    if (i == 17) broker.max_len = -1;
    const std::string id = "evt_" + std::to_string(i);
    if (i != 17) stored.push_back(id);
    transport.Start(Message(redis.url(), id, broker),
                    [&results, i](SendResult r) { results[i].set_value(std::move(r)); });
  }
  // An entry id, "<ms>-<seq>", as numbers to compare.
  const auto id_of = [](const std::string& entry) {
    const size_t dash = entry.find('-');
    return std::pair<uint64_t, uint64_t>(std::stoull(entry.substr(0, dash)),
                                         std::stoull(entry.substr(dash + 1)));
  };
  std::pair<uint64_t, uint64_t> last_entry{0, 0};
  for (int i = 0; i < 50; ++i) {
    const SendResult r = results[i].get_future().get();
    if (i == 17) {
      EXPECT_FALSE(r.acknowledged);
      EXPECT_EQ(r.error.value_or("").rfind("redis: ERR", 0), 0u) << r.error.value_or("");
      continue;
    }
    EXPECT_TRUE(r.acknowledged) << i << ": " << r.error.value_or("");
    // Entry ids grow, so each answer is its own entry's.
    ASSERT_NE(r.body.find('-'), std::string::npos) << r.body;
    EXPECT_GT(id_of(r.body), last_entry) << i << ": " << r.body;
    last_entry = id_of(r.body);
  }
  std::vector<std::string> ids;
  for (const auto& entry : redis.Entries("webhooks")) {
    for (const auto& [field, value] : entry) {
      if (field == "webhook-id") ids.push_back(value);
    }
  }
  EXPECT_EQ(ids, stored);
}

// A Redis that takes the AUTH and then hangs up: the pipelined XADDs after it meet a
// reset connection. Each is an error; none ends the process with SIGPIPE.
TEST(RedisTransportTest, PipelinedWritesToARedisThatHungUpAreErrorsNotASignal) {
  const int listener = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(listen(listener, 4), 0);
  socklen_t len = sizeof(addr);
  getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len);
  std::thread server([listener] {
    const int fd = accept(listener, nullptr, nullptr);
    if (fd < 0) return;
    char buf[4096];
    recv(fd, buf, sizeof(buf), 0);  // the AUTH
    send(fd, "+OK\r\n", 5, MSG_NOSIGNAL);
    close(fd);
  });
  {
    RedisTransport transport(Loopback());
    BrokerSettings broker;
    broker.password = "pw";
    const std::string url = "redis://127.0.0.1:" + std::to_string(ntohs(addr.sin_port));
    std::vector<std::promise<SendResult>> results(20);
    for (int i = 0; i < 20; ++i) {
      transport.Start(Message(url, "evt_" + std::to_string(i), broker),
                      [&results, i](SendResult r) { results[i].set_value(std::move(r)); });
    }
    for (int i = 0; i < 20; ++i) {
      const SendResult r = results[i].get_future().get();
      EXPECT_FALSE(r.acknowledged) << i;
      EXPECT_EQ(r.error.value_or("").rfind("redis: ", 0), 0u) << i << ": " << r.error.value_or("");
    }
  }
  server.join();
  close(listener);
}

TEST(RedisTransportTest, AStoppedRedisIsAnErrorAndTheConnectionIsMadeAgainAfterItComesBack) {
  RedisServer redis;
  RedisTransport transport(Loopback());
  ASSERT_TRUE(SendAndWait(transport, Message(redis.url(), "evt_1")).acknowledged);
  redis.Stop();
  const SendResult lost = SendAndWait(transport, Message(redis.url(), "evt_2"));
  EXPECT_FALSE(lost.acknowledged);
  ASSERT_TRUE(lost.error);
  EXPECT_EQ(lost.error->rfind("redis: ", 0), 0u) << *lost.error;
  redis.Start();
  // Within the backoff a message fails at once; after it, the connection is made again.
  SendResult back;
  for (int i = 0; i < 50 && !back.acknowledged; ++i) {
    back = SendAndWait(transport, Message(redis.url(), "evt_3"));
    if (!back.acknowledged) std::this_thread::sleep_for(100ms);
  }
  EXPECT_TRUE(back.acknowledged) << back.error.value_or("");
  ASSERT_EQ(redis.Entries("webhooks").size(), 1u);  // the new server holds evt_3 alone
}

TEST(RedisTransportTest, RefusedCredentialsAreAnErrorInRedissOwnWords) {
  RedisServer redis({"--requirepass", "s3cret"});
  RedisTransport transport(Loopback());
  BrokerSettings wrong;
  wrong.password = "wrong";
  const SendResult refused = SendAndWait(transport, Message(redis.url(), "evt_1", wrong));
  EXPECT_FALSE(refused.acknowledged);
  ASSERT_TRUE(refused.error);
  EXPECT_NE(refused.error->find("AUTH"), std::string::npos) << *refused.error;
  EXPECT_EQ(refused.error->find("wrong"), std::string::npos) << "the password in an error";
  BrokerSettings none;
  const SendResult unauthenticated = SendAndWait(transport, Message(redis.url(), "evt_2", none));
  EXPECT_FALSE(unauthenticated.acknowledged);
  // The right password is another connection (its key names the credentials).
  BrokerSettings right;
  right.password = "s3cret";
  const SendResult ok = SendAndWait(transport, Message(redis.url(), "evt_3", right));
  EXPECT_TRUE(ok.acknowledged) << ok.error.value_or("");
  EXPECT_EQ(redis.Entries("webhooks", "s3cret").size(), 1u);
}

TEST(RedisTransportTest, APrivateAddressIsRefusedUnlessAllowed) {
  RedisServer redis;
  RedisTransport::Options options = Loopback();
  options.allow_private = false;
  RedisTransport transport(options);
  const SendResult r = SendAndWait(transport, Message(redis.url(), "evt_1"));
  EXPECT_TRUE(r.refused);
  EXPECT_FALSE(r.acknowledged);
  EXPECT_EQ(r.error, std::string(kAddressNotAllowed));
  EXPECT_TRUE(redis.Entries("webhooks").empty());
}

TEST(RedisTransportTest, AHungRedisTimesOutAndHoldsUpNoOtherDestination) {
  RedisServer hung, healthy;
  RedisTransport transport(Loopback());
  ASSERT_TRUE(SendAndWait(transport, Message(hung.url(), "evt_0")).acknowledged);
  hung.Pause();
  std::promise<SendResult> slow;
  auto slow_result = slow.get_future();
  const auto started = std::chrono::steady_clock::now();
  transport.Start(Message(hung.url(), "evt_1"),
                  [&slow](SendResult r) { slow.set_value(std::move(r)); });
  // The healthy one answers while the hung one waits out its timeout.
  const SendResult fast = SendAndWait(transport, Message(healthy.url(), "evt_2"));
  EXPECT_TRUE(fast.acknowledged);
  EXPECT_EQ(slow_result.wait_for(0s), std::future_status::timeout);
  const SendResult timed_out = slow_result.get();
  EXPECT_GE(std::chrono::steady_clock::now() - started, 900ms);
  EXPECT_TRUE(timed_out.timed_out) << timed_out.error.value_or("");
  EXPECT_FALSE(timed_out.acknowledged);
  hung.Resume();
}

TEST(RedisTransportTest, ADestinationWithoutAStreamOrOverTlsIsAnErrorNotASend) {
  RedisServer redis;
  RedisTransport transport(Loopback());
  Outgoing no_stream = Message(redis.url(), "evt_1");
  no_stream.broker->stream = "";
  EXPECT_EQ(SendAndWait(transport, no_stream).error, "redis: the destination has no broker.stream");
  Outgoing tls = Message("rediss://127.0.0.1:" + std::to_string(redis.port()), "evt_2");
  EXPECT_FALSE(SendAndWait(transport, tls).acknowledged);
}

}  // namespace
}  // namespace webhookd::redis_transport_test
