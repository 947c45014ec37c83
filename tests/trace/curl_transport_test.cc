#include "trace/curl_transport.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <future>

#include "tests/testing/process.h"

namespace webhookd::trace::curl_transport_test {
namespace {

using namespace std::chrono_literals;

// A socket that listens on 127.0.0.1 and never accepts: the kernel completes the
// handshake and takes the request, and no answer ever comes.
class SilentListener {
 public:
  SilentListener() {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&addr), len) != 0 || ::listen(fd_, 8) != 0 ||
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      ADD_FAILURE() << "cannot listen on 127.0.0.1";
    }
    port_ = ntohs(addr.sin_port);
  }
  ~SilentListener() { ::close(fd_); }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/v1/traces"; }

 private:
  int fd_ = -1;
  int port_ = 0;
};

TEST(CurlTransport, NoListenerIsAnErrorNotAnAnswer) {
  SystemClock clock;
  CurlTransport transport(clock);
  const std::string url =
      "http://127.0.0.1:" + std::to_string(webhookd::testing::FreePort()) + "/v1/traces";
  const auto answer = transport.Post(url, {}, "application/x-protobuf", "", 2s);
  ASSERT_FALSE(answer.has_value());
  EXPECT_EQ(answer.error().kind, ErrorKind::kUnavailable);
}

TEST(CurlTransport, TimesOut) {
  SilentListener silent;
  SystemClock clock;
  CurlTransport transport(clock);
  const auto start = std::chrono::steady_clock::now();
  const auto answer = transport.Post(silent.url(), {}, "application/json", "{}", 200ms);
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(answer.has_value());
  EXPECT_GE(took, 150ms);
  EXPECT_LT(took, 5s);
}

TEST(CurlTransport, CancelEndsAPostAtOnceAndEveryLaterOne) {
  SilentListener silent;
  SystemClock clock;
  CurlTransport transport(clock);
  const auto start = std::chrono::steady_clock::now();
  auto posted = std::async(std::launch::async, [&] {
    return transport.Post(silent.url(), {}, "application/json", "{}", 30s);
  });
  std::this_thread::sleep_for(100ms);
  transport.Cancel();
  ASSERT_EQ(posted.wait_for(5s), std::future_status::ready);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
  const auto answer = posted.get();
  ASSERT_FALSE(answer.has_value());
  EXPECT_EQ(answer.error().message, "export cancelled");
  EXPECT_FALSE(transport.Post(silent.url(), {}, "application/json", "{}", 30s).has_value());
}

}  // namespace
}  // namespace webhookd::trace::curl_transport_test
