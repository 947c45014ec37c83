// The Redis transport (worker/redis_transport.h) against a server written to make it hold
// memory: its first answer announces more than any answer of XADD, AUTH or SELECT could
// be (a bulk string of a gigabyte, an array of a hundred million elements), which hiredis
// 0.14 would buffer or allocate as told; a server that takes the message a few bytes at a
// time, and a name with 30 addresses that never answer a connect: each attempt keeps one
// deadline (before, each address and each write had a whole attempt timeout of its own).
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <future>
#include <optional>
#include <string>
#include <thread>

#include "tests/testing/black_hole.h"
#include "tests/testing/raw_listener.h"
#include "worker/redis_transport.h"

namespace webhookd::redis_hostile_broker_test {
namespace {

using namespace std::chrono_literals;

// Answers the first command with `answer`, then sends filler behind it: at most 64 MiB,
// for ten seconds at most.
class HostileRedis {
 public:
  explicit HostileRedis(std::string answer) : answer_(std::move(answer)) {
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
  ~HostileRedis() {
    stop_ = true;
    shutdown(listener_, SHUT_RDWR);
    thread_.join();
    close(listener_);
  }
  HostileRedis(const HostileRedis&) = delete;
  HostileRedis& operator=(const HostileRedis&) = delete;

  std::string url() const { return "redis://127.0.0.1:" + std::to_string(port_); }

 private:
  void Serve() {
    const int fd = accept(listener_, nullptr, nullptr);
    if (fd < 0) return;
    timeval tv{0, 100'000};  // a blocked send gives up every 100 ms, to see stop_
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    char buf[4096];
    if (recv(fd, buf, sizeof(buf), 0) > 0 &&
        send(fd, answer_.data(), answer_.size(), MSG_NOSIGNAL) > 0) {
      const std::string filler(64 * 1024, ':');
      size_t sent = 0;
      const auto end = std::chrono::steady_clock::now() + 10s;
      while (!stop_ && sent < 64 * 1024 * 1024 && std::chrono::steady_clock::now() < end) {
        const ssize_t n = send(fd, filler.data(), filler.size(), MSG_NOSIGNAL);
        if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) break;
        if (n > 0) sent += static_cast<size_t>(n);
      }
    }
    close(fd);
  }

  const std::string answer_;
  int listener_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_ = false;
  std::thread thread_;
};

Outgoing Message(const std::string& url, std::optional<std::string> password = std::nullopt) {
  Outgoing out;
  out.url = url;
  out.body = R"({"type":"order.created"})";
  out.headers = {{"webhook-id", "evt_1"}};
  BrokerSettings broker;
  broker.stream = "webhooks";
  broker.password = std::move(password);
  out.broker = broker;
  return out;
}

SendResult SendAndWait(RedisTransport& transport, Outgoing out) {
  std::promise<SendResult> p;
  auto f = p.get_future();
  transport.Start(std::move(out), [&p](SendResult r) { p.set_value(std::move(r)); });
  if (f.wait_for(30s) != std::future_status::ready) {
    ADD_FAILURE() << "no result within 30 s";
    std::abort();  // the callback still refers to p
  }
  return f.get();
}

RedisTransport::Options Loopback() {
  RedisTransport::Options o;
  o.attempt_timeout = 5s;  // longer than the answers below take to be refused
  o.allow_private = true;
  return o;
}

TEST(RedisHostileBrokerTest, AnXaddAnsweredWithAGigabyteIsRefusedAt64KiB) {
  HostileRedis redis("$1000000000\r\n");
  RedisTransport transport(Loopback());
  const auto started = std::chrono::steady_clock::now();
  const SendResult r = SendAndWait(transport, Message(redis.url()));
  EXPECT_FALSE(r.acknowledged);
  ASSERT_TRUE(r.error);
  EXPECT_EQ(*r.error, "redis: an answer longer than 64 KiB");
  EXPECT_FALSE(r.timed_out);
  EXPECT_LT(std::chrono::steady_clock::now() - started, 4s);
}

TEST(RedisHostileBrokerTest, AnAuthAnsweredWithAGigabyteIsRefusedAt64KiB) {
  HostileRedis redis("$1000000000\r\n");
  RedisTransport transport(Loopback());
  const auto started = std::chrono::steady_clock::now();
  const SendResult r = SendAndWait(transport, Message(redis.url(), "secret"));
  EXPECT_FALSE(r.acknowledged);
  ASSERT_TRUE(r.error);
  EXPECT_EQ(*r.error, "redis: an answer longer than 64 KiB");
  EXPECT_LT(std::chrono::steady_clock::now() - started, 4s);
}

TEST(RedisHostileBrokerTest, AnAnswerWithAnArrayIsRefusedBeforeItsElementsAreAllocated) {
  HostileRedis redis("*100000000\r\n");
  RedisTransport transport(Loopback());
  const SendResult r = SendAndWait(transport, Message(redis.url()));
  EXPECT_FALSE(r.acknowledged);
  ASSERT_TRUE(r.error);
  EXPECT_EQ(*r.error, "redis: an answer with an array");
}

TEST(RedisHostileBrokerTest, AnAuthAnsweredWithAnArrayIsRefusedToo) {
  HostileRedis redis("*100000000\r\n");
  RedisTransport transport(Loopback());
  const SendResult r = SendAndWait(transport, Message(redis.url(), "secret"));
  EXPECT_FALSE(r.acknowledged);
  ASSERT_TRUE(r.error);
  EXPECT_EQ(*r.error, "redis: an answer with an array");
}

TEST(RedisHostileBrokerTest, AServerThatReadsAFewBytesAtATimeEndsTheAttemptAtItsDeadline) {
  // Reads 64 KiB every 200 ms and answers nothing, for a minute at most.
  testing::RawListener redis("127.0.0.1", 0, [](testing::RawConnection& c) {
    for (int i = 0; i < 300 && c.ReadAvailable(64 * 1024) && c.Sleep(200ms); ++i) {
    }
  });
  auto options = Loopback();
  options.attempt_timeout = 1s;
  RedisTransport transport(options);
  Outgoing out = Message("redis://127.0.0.1:" + std::to_string(redis.port()));
  out.body.assign(size_t{32} * 1024 * 1024, 'x');  // 100 s at the pace the server reads
  const auto started = std::chrono::steady_clock::now();
  const SendResult r = SendAndWait(transport, std::move(out));
  EXPECT_FALSE(r.acknowledged);
  EXPECT_TRUE(r.timed_out);
  ASSERT_TRUE(r.error);
  EXPECT_EQ(*r.error, "redis: the broker did not take the message within the attempt timeout");
  // The attempt timeout and a second, with room for a loaded machine.
  EXPECT_LT(std::chrono::steady_clock::now() - started, 10s);
}

TEST(RedisHostileBrokerTest, ThirtyAddressesThatNeverAnswerTakeOneAttemptTimeoutNotThirty) {
  testing::BlackHole hole;
  testing::ManyAddresses resolver(30);
  auto options = Loopback();
  options.attempt_timeout = 1s;
  options.resolver = &resolver;
  RedisTransport transport(options);
  const auto started = std::chrono::steady_clock::now();
  const SendResult r =
      SendAndWait(transport, Message("redis://many.test:" + std::to_string(hole.port())));
  EXPECT_FALSE(r.acknowledged);
  EXPECT_TRUE(r.timed_out) << r.error.value_or("");
  // One attempt timeout, with room for a loaded machine; thirty would be 30 s.
  EXPECT_LT(std::chrono::steady_clock::now() - started, 10s);
}

}  // namespace
}  // namespace webhookd::redis_hostile_broker_test
