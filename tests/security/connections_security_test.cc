// One client holding thousands of connections, against the real binary on loopback.
// Before: webhookd ran with the default soft limit of 1,024 descriptors and took every
// connection it could, so 3,000 idle keep-alive connections from one address left no
// descriptor to accept another client's with, and /healthz from elsewhere went
// unanswered for as long as they were held.
#include <arpa/inet.h>
#include <errno.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "tests/testing/receiver.h"
#include "tests/testing/test_database.h"
#include "tests/testing/webhookd_process.h"

namespace webhookd::testing::connections_security_test {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr int kFlood = 3000;

// A TCP connection to 127.0.0.1:`port` from `from` (any loopback address), its connect
// started without waiting, so a flood of them never blocks on a full accept queue.
class Conn {
 public:
  Conn(int port, const char* from) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    if (fd_ < 0) return;
    sockaddr_in local{};
    local.sin_family = AF_INET;
    ::inet_pton(AF_INET, from, &local.sin_addr);
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&local), sizeof(local)) != 0) return;
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    started_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 ||
               errno == EINPROGRESS;
  }
  ~Conn() {
    if (fd_ >= 0) ::close(fd_);
  }
  Conn(const Conn&) = delete;
  Conn& operator=(const Conn&) = delete;

  // Whether the handshake completed within `wait`.
  bool Connected(std::chrono::milliseconds wait = 5000ms) {
    if (!started_) return false;
    pollfd p{fd_, POLLOUT, 0};
    if (::poll(&p, 1, static_cast<int>(wait.count())) <= 0) return false;
    int error = 0;
    socklen_t len = sizeof(error);
    ::getsockopt(fd_, SOL_SOCKET, SO_ERROR, &error, &len);
    return error == 0;
  }

  // Sends `request` and reads the answer's head: its status, 0 when none came within
  // `wait` (closed, reset, or silent).
  int Ask(const std::string& request, std::chrono::milliseconds wait) {
    const auto until = Clock::now() + wait;
    if (!Connected(wait)) return 0;
    if (::send(fd_, request.data(), request.size(), MSG_NOSIGNAL) !=
        static_cast<ssize_t>(request.size())) {
      return 0;
    }
    std::string got;
    char buf[4096];
    while (Clock::now() < until && got.find("\r\n\r\n") == std::string::npos) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now());
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(std::max<int64_t>(left.count(), 1))) <= 0) continue;
      const ssize_t n = ::recv(fd_, buf, sizeof(buf), 0);
      if (n <= 0) break;
      got.append(buf, static_cast<size_t>(n));
    }
    if (!got.starts_with("HTTP/1.1 ") || got.size() < 12) return 0;
    return std::stoi(got.substr(9, 3));
  }
  int Health(std::chrono::milliseconds wait) {
    return Ask("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n", wait);
  }

 private:
  int fd_ = -1;
  bool started_ = false;
};

// Runs webhookd with the soft open-file limit most systems start a service with, 1,024:
// what it can hold is then of its own making. The test process itself gets its hard
// limit back for the thousands of connections it makes.
class SoftLimitOf1024 {
 public:
  SoftLimitOf1024() {
    getrlimit(RLIMIT_NOFILE, &saved_);
    rlimit low = saved_;
    low.rlim_cur = std::min<rlim_t>(saved_.rlim_max, 1024);
    setrlimit(RLIMIT_NOFILE, &low);
  }
  void Restore() {
    rlimit high = saved_;
    high.rlim_cur = saved_.rlim_max;
    setrlimit(RLIMIT_NOFILE, &high);
  }
  rlim_t hard() const { return saved_.rlim_max; }

 private:
  rlimit saved_{};
};

class ConnectionsSecurityTest : public ::testing::Test {
 protected:
  ConnectionsSecurityTest() : webhookd_(db_.url(), "all", {{"WEBHOOKD_RETRY_SCHEDULE", "1s"}}) {
    limit_.Restore();
  }

  void SetUp() override {
    if (limit_.hard() != RLIM_INFINITY && limit_.hard() < kFlood + 600) {
      GTEST_SKIP() << "the hard open-file limit (" << limit_.hard() << ") is below the "
                   << kFlood + 600 << " descriptors this test needs";
    }
  }

  SoftLimitOf1024 limit_;  // before webhookd_: the child starts with it
  TestDatabase db_;
  WebhookdProcess webhookd_;
};

TEST_F(ConnectionsSecurityTest, ThousandsOfIdleConnectionsFromOneAddressDoNotSilenceAnother) {
  Receiver receiver;
  auto dest = webhookd_.Call("POST", "/v1/destinations",
                             {{"url", receiver.url()}, {"event_types", {"order.*"}}});
  ASSERT_EQ(dest.status, 201) << dest.body;

  // 3,000 connections from 127.0.0.1, held open and idle.
  std::vector<std::unique_ptr<Conn>> flood;
  flood.reserve(kFlood);
  for (int i = 0; i < kFlood; ++i) {
    flood.push_back(std::make_unique<Conn>(webhookd_.port(), "127.0.0.1"));
  }
  // Each handshake completed (held, or accepted and closed) or given up on: what is
  // measured below is a server with thousands of connections from one address, not the
  // kernel's queue in the middle of a burst.
  int handshakes = 0;
  const auto settled = Clock::now() + 10s;
  for (auto& c : flood) {
    const auto left = std::max(
        0ms, std::chrono::duration_cast<std::chrono::milliseconds>(settled - Clock::now()));
    handshakes += c->Connected(left) ? 1 : 0;
  }
  RecordProperty("handshakes", handshakes);

  // Another address is answered within a second, each of several times.
  for (int i = 0; i < 3; ++i) {
    Conn other(webhookd_.port(), "127.0.0.2");
    const auto t0 = Clock::now();
    EXPECT_EQ(other.Health(1s), 200) << i;
    EXPECT_LT(Clock::now() - t0, 1s) << i;
  }
  // And deliveries go on: an event published from that address is delivered.
  const std::string body = R"({"type": "order.created", "payload": {"id": 1}})";
  Conn publisher(webhookd_.port(), "127.0.0.2");
  EXPECT_EQ(publisher.Ask("POST /v1/events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " +
                              webhookd_.admin_key() +
                              "\r\nContent-Type: application/json\r\nContent-Length: " +
                              std::to_string(body.size()) + "\r\n\r\n" + body,
                          10s),
            202);
  EXPECT_TRUE(receiver.WaitFor(1, 30s));
}

TEST_F(ConnectionsSecurityTest, ConnectionTwoHundredFiftySevenFromOneAddressIsRefused) {
  // The default cap, WEBHOOKD_MAX_CONNECTIONS_PER_CLIENT=256, from an address nothing
  // else uses (the start-up checks' connections from 127.0.0.1 may not be closed yet).
  std::vector<std::unique_ptr<Conn>> held;
  for (int i = 0; i < 256; ++i) {
    held.push_back(std::make_unique<Conn>(webhookd_.port(), "127.0.0.3"));
    ASSERT_TRUE(held.back()->Connected()) << i;
  }
  Conn over(webhookd_.port(), "127.0.0.3");
  // Closed unanswered (the kernel completed the handshake; webhookd closed it at once).
  EXPECT_EQ(over.Health(10s), 0);
  // The 256 are served, and so is another address.
  EXPECT_EQ(held.back()->Health(10s), 200);
  EXPECT_EQ(held.front()->Health(10s), 200);
  Conn other(webhookd_.port(), "127.0.0.2");
  EXPECT_EQ(other.Health(10s), 200);

  // The cap is on connections open at once: one closed makes room for one more.
  held.pop_back();
  int status = 0;
  for (int i = 0; i < 50 && status != 200; ++i) {  // webhookd sees the close shortly
    if (i > 0) std::this_thread::sleep_for(100ms);
    Conn again(webhookd_.port(), "127.0.0.3");
    status = again.Health(10s);
  }
  EXPECT_EQ(status, 200);
}

}  // namespace
}  // namespace webhookd::testing::connections_security_test
