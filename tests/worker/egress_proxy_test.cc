// CurlSender through a real forward proxy (tinyproxy): the CONNECT asks for the address
// webhookd vetted, never the name; a refused address never reaches the proxy; a proxy that
// cannot be reached is told apart from one that answers, and from the receiver.
#include <gtest/gtest.h>

#include "tests/testing/forward_proxy.h"
#include "tests/testing/process.h"
#include "tests/testing/receiver.h"
#include "worker/curl_sender.h"

namespace webhookd::egress_proxy_test {
namespace {

using namespace std::chrono_literals;
using testing::ForwardProxy;
using testing::Receiver;

Outgoing Post(const std::string& url) {
  return Outgoing{url, {{"Content-Type", "application/json"}}, R"({"a":1})"};
}

CurlSender::Options Through(const ForwardProxy& proxy, bool allow_private) {
  CurlSender::Options o;
  o.allow_private = allow_private;
  o.connect_timeout = 1s;
  o.attempt_timeout = 3s;
  o.proxy = proxy.url();
  return o;
}

std::string At(int port) { return "127.0.0.1:" + std::to_string(port); }

TEST(EgressProxyTest, TheConnectAsksForTheVettedAddressAndHostStaysTheName) {
  ForwardProxy proxy;
  Receiver receiver;
  CurlSender::Options o = Through(proxy, /*allow_private=*/true);
  o.resolve = {"hooks.example.test:" + std::to_string(receiver.port()) + ":127.0.0.1"};
  CurlSender sender(o);
  const std::string by_name = "http://hooks.example.test:" + std::to_string(receiver.port());
  SendResult r = sender.Send(Post(by_name + "/a"));
  ASSERT_EQ(r.status_code, std::optional<int>(200)) << r.error.value_or("");
  r = sender.Send(Post("http://" + At(receiver.port()) + "/b"));
  ASSERT_EQ(r.status_code, std::optional<int>(200)) << r.error.value_or("");
  ASSERT_EQ(receiver.count(), 2u);
  EXPECT_EQ(receiver.requests()[0].header("Host"),
            "hooks.example.test:" + std::to_string(receiver.port()));
  const auto connects = proxy.Connects();
  ASSERT_FALSE(connects.empty());
  for (const std::string& target : connects) EXPECT_EQ(target, At(receiver.port()));
}

TEST(EgressProxyTest, ARefusedAddressNeverReachesTheProxy) {
  ForwardProxy proxy;
  CurlSender::Options o = Through(proxy, /*allow_private=*/false);
  o.resolve = {"inside.example.test:80:10.1.2.3", "twice.example.test:80:10.1.2.3,127.0.0.1"};
  CurlSender sender(o);
  for (const char* url : {"http://inside.example.test/h", "http://twice.example.test/h",
                          "http://127.0.0.1:80/h", "http://localhost/h"}) {
    const SendResult r = sender.Send(Post(url));
    EXPECT_TRUE(r.refused) << url;
    EXPECT_EQ(r.error, "destination address not allowed") << url;
    EXPECT_FALSE(r.proxy_unreachable) << url;
  }
  EXPECT_TRUE(proxy.Connects().empty());
}

TEST(EgressProxyTest, ADeadProxyIsUnreachableAndTheNextAttemptGoesOnceItIsBack) {
  ForwardProxy proxy;
  Receiver receiver;
  CurlSender sender(Through(proxy, /*allow_private=*/true));
  const std::string url = "http://" + At(receiver.port()) + "/h";
  proxy.Stop();
  SendResult r = sender.Send(Post(url));
  EXPECT_TRUE(r.proxy_unreachable);
  EXPECT_FALSE(r.status_code.has_value());
  ASSERT_TRUE(r.error.has_value());
  EXPECT_TRUE(r.error->starts_with("egress proxy unreachable: ")) << *r.error;
  EXPECT_EQ(receiver.count(), 0u);
  proxy.Start();
  r = sender.Send(Post(url));
  EXPECT_EQ(r.status_code, std::optional<int>(200)) << r.error.value_or("");
  EXPECT_FALSE(r.proxy_unreachable);
}

TEST(EgressProxyTest, AProxyThatCannotReachTheReceiverSaysSoAndIsNotUnreachable) {
  ForwardProxy proxy;
  CurlSender sender(Through(proxy, /*allow_private=*/true));
  const int closed = testing::FreePort();  // nothing listens there
  const SendResult r = sender.Send(Post("http://" + At(closed) + "/h"));
  EXPECT_FALSE(r.proxy_unreachable);
  EXPECT_FALSE(r.refused);
  ASSERT_TRUE(r.error.has_value());
  EXPECT_TRUE(r.error->starts_with("egress proxy answered ")) << *r.error;
  EXPECT_EQ(proxy.Connects(), std::vector<std::string>{At(closed)});
}

TEST(EgressProxyTest, ANameThatDoesNotResolveIsADnsErrorAndTheProxyIsNotAsked) {
  ForwardProxy proxy;
  CurlSender sender(Through(proxy, /*allow_private=*/true));
  const SendResult r = sender.Send(Post("http://no-such-host.invalid/h"));
  EXPECT_EQ(r.error, "DNS: no address for no-such-host.invalid");
  EXPECT_FALSE(r.proxy_unreachable);
  EXPECT_TRUE(proxy.Connects().empty());
}

}  // namespace
}  // namespace webhookd::egress_proxy_test
