// WEBHOOKD_EGRESS_PROXY end to end (docs/egress.md): deliveries leave through a real
// forward proxy (tinyproxy); while it is down attempts are skipped as "egress proxy
// unreachable" without moving the destination's circuit, and once it is back the
// delivery goes.
#include <gtest/gtest.h>

#include "tests/testing/forward_proxy.h"
#include "tests/testing/receiver.h"
#include "tests/testing/test_database.h"
#include "tests/testing/wait.h"
#include "tests/testing/webhookd_process.h"

namespace webhookd::testing::egress_e2e_test {
namespace {

using Json = nlohmann::json;
using namespace std::chrono_literals;

TEST(EgressE2eTest, DeliveriesGoThroughTheProxyAndADeadProxyOpensNoCircuit) {
  ForwardProxy proxy;
  Receiver receiver;
  TestDatabase db;
  WebhookdProcess webhookd(db.url(), "all",
                           {{"WEBHOOKD_EGRESS_PROXY", proxy.url()},
                            // Skips use attempts up: enough for the checks and a restart
                            // of the proxy (6 s) before the delivery would be exhausted.
                            {"WEBHOOKD_RETRY_SCHEDULE", RetrySchedule("300ms", 20)},
                            {"WEBHOOKD_RETRY_JITTER", "0"},
                            {"WEBHOOKD_CIRCUIT_THRESHOLD", "2"}});
  const auto call = [&](const std::string& method, const std::string& path, const Json& body) {
    auto res = webhookd.Call(method, path, body);
    EXPECT_LT(res.status, 300) << method << " " << path << ": " << res.body;
    return Json::parse(res.body, nullptr, false);
  };
  const Json dst = call("POST", "/v1/destinations", {{"url", receiver.url()}});
  const std::string dst_path = "/v1/destinations/" + dst["id"].get<std::string>();
  const Json first = call("POST", "/v1/events", {{"type", "a.b"}, {"payload", {{"n", 1}}}});
  ASSERT_TRUE(receiver.WaitFor(1, 20s));
  // Recorded too, before the proxy goes: its answer still has to come back through it.
  const std::string first_delivery =
      "/v1/deliveries/" + first["deliveries"][0]["id"].get<std::string>();
  ASSERT_TRUE(WaitUntil(
      [&] { return call("GET", first_delivery, nullptr)["status"] == "succeeded"; }, 20s));
  EXPECT_EQ(proxy.Connects().front(), "127.0.0.1:" + std::to_string(receiver.port()));

  proxy.Stop();
  const Json event = call("POST", "/v1/events", {{"type", "a.b"}, {"payload", {{"n", 2}}}});
  const std::string attempts =
      "/v1/deliveries/" + event["deliveries"][0]["id"].get<std::string>() + "/attempts";
  ASSERT_TRUE(WaitUntil([&] { return call("GET", attempts, nullptr)["data"].size() >= 3; }, 20s));
  const Json recorded = call("GET", attempts, nullptr);
  for (const Json& a : recorded["data"]) {
    EXPECT_EQ(a["outcome"], "skipped") << a;
    EXPECT_TRUE(a["error"].get<std::string>().starts_with("egress proxy unreachable")) << a;
  }
  // Three failures against a threshold of two, and the circuit has not moved.
  const Json health = call("GET", dst_path, nullptr)["health"];
  EXPECT_EQ(health["circuit"], "closed") << health;
  EXPECT_EQ(health["consecutive_failures"], 0) << health;
  EXPECT_EQ(receiver.count(), 1u);

  proxy.Start();
  ASSERT_TRUE(receiver.WaitFor(2, 20s));
  EXPECT_EQ(Json::parse(receiver.requests()[1].body)["data"]["n"], 2);
  auto metrics = webhookd.Client()->Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_EQ(metrics->body.find("webhookd_egress_proxy_unreachable_total 0\n"), std::string::npos);
  EXPECT_NE(metrics->body.find("webhookd_egress_proxy_unreachable_total "), std::string::npos);
}

}  // namespace
}  // namespace webhookd::testing::egress_e2e_test
