#include "client/http_transport.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <thread>

#include "tests/testing/process.h"

namespace webhookd::client::http_transport_test {
namespace {

using std::chrono::milliseconds;

// An httplib server on a loopback port, run on its own thread for the test's duration.
class LoopbackApi {
 public:
  LoopbackApi() {
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~LoopbackApi() {
    server_.stop();
    thread_.join();
  }
  httplib::Server& server() { return server_; }
  std::string origin() const { return "http://127.0.0.1:" + std::to_string(port_); }

 private:
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
};

TEST(HttpTransportTest, PostsAndReturnsStatusBodyAndRetryAfter) {
  LoopbackApi api;
  std::string seen_body, seen_key, seen_auth;
  api.server().Post("/v1/events", [&](const httplib::Request& req, httplib::Response& res) {
    seen_body = req.body;
    seen_key = req.get_header_value("Idempotency-Key");
    seen_auth = req.get_header_value("Authorization");
    res.status = 503;
    res.set_header("Retry-After", "7");
    res.set_content(R"({"title":"busy"})", "application/problem+json");
  });
  HttpTransport transport(api.origin(), {});
  const auto result = transport.Send(
      {"/v1/events", {{"Idempotency-Key", "k1"}, {"Authorization", "Bearer s"}}, "{\"a\": 1}"});
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(result->status, 503);
  EXPECT_EQ(result->body, R"({"title":"busy"})");
  EXPECT_EQ(result->retry_after, "7");
  EXPECT_EQ(seen_body, "{\"a\": 1}");
  EXPECT_EQ(seen_key, "k1");
  EXPECT_EQ(seen_auth, "Bearer s");
}

TEST(HttpTransportTest, ARefusedConnectionIsAConnectError) {
  HttpTransport transport("http://127.0.0.1:" + std::to_string(testing::FreePort()), {});
  const auto result = transport.Send({"/v1/events", {}, "{}"});
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().kind, TransportError::Kind::kConnect);
}

TEST(HttpTransportTest, ASlowAnswerIsATimeout) {
  LoopbackApi api;
  api.server().Post("/v1/events", [](const httplib::Request&, httplib::Response& res) {
    std::this_thread::sleep_for(milliseconds(1500));
    res.status = 202;
  });
  HttpTransport transport(api.origin(), {.io_timeout = milliseconds(300)});
  const auto started = std::chrono::steady_clock::now();
  const auto result = transport.Send({"/v1/events", {}, "{}"});
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().kind, TransportError::Kind::kTimeout) << result.error().message;
  EXPECT_LT(std::chrono::steady_clock::now() - started, milliseconds(1400));
}

TEST(HttpTransportTest, ApiUrlSplitsIntoOriginAndPrefix) {
  auto plain = ParseApiUrl("http://127.0.0.1:8080");
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->origin, "http://127.0.0.1:8080");
  EXPECT_EQ(plain->prefix, "");
  auto prefixed = ParseApiUrl("https://Api.Example.com/webhookd/");
  ASSERT_TRUE(prefixed);
  EXPECT_EQ(prefixed->origin, "https://api.example.com:443");
  EXPECT_EQ(prefixed->prefix, "/webhookd");
  auto v6 = ParseApiUrl("http://[::1]:9000/");
  ASSERT_TRUE(v6);
  EXPECT_EQ(v6->origin, "http://[::1]:9000");
  EXPECT_FALSE(ParseApiUrl("127.0.0.1:8080"));
  EXPECT_FALSE(ParseApiUrl("ftp://127.0.0.1/"));
  EXPECT_FALSE(ParseApiUrl("http://127.0.0.1/?x=1"));
}

}  // namespace
}  // namespace webhookd::client::http_transport_test
