// A name server that never answers: before, destination names were resolved on four
// shared threads before an attempt's timeout started, so four such names held up every
// named destination's deliveries for as long as the resolver waited (30 s here), and a
// destination created with such a URL held an API thread as long. Now each lookup runs
// inside its own attempt's deadline, and the API waits at most 3 s for one.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/testing/dns_server.h"
#include "tests/testing/receiver.h"
#include "tests/testing/test_database.h"
#include "tests/testing/wait.h"
#include "tests/testing/webhookd_process.h"

namespace webhookd::testing::dns_fault_test {
namespace {

using namespace std::chrono_literals;
using Json = nlohmann::json;

TEST(DnsFaultTest, ANameServerThatNeverAnswersHoldsUpNothingElse) {
  DnsServer dns("127.0.0.2", {{"fast.example.test", "127.0.0.1"}}, {"slow.example.test"});
  if (!dns.bound()) GTEST_SKIP() << "needs root: binding 127.0.0.2:53 failed";
  const std::string resolv_conf = dns.WriteResolvConf(TestLogDir());
  TestDatabase db;
  Receiver receiver;
  WebhookdProcess webhookd(db.url(), "all",
                           {{"WEBHOOKD_ATTEMPT_TIMEOUT", "2s"},
                            {"WEBHOOKD_CONNECT_TIMEOUT", "1s"},
                            {"WEBHOOKD_RETRY_SCHEDULE", "1h"},
                            {"WEBHOOKD_RETRY_JITTER", "0"}},
                           DnsServer::WithResolvConf(resolv_conf));
  const std::string port = std::to_string(receiver.port());

  // The API's lookup of a silent name (made when private destinations are not allowed)
  // ends within its deadline, in a 422.
  {
    WebhookdProcess api(db.url(), "server", {{"WEBHOOKD_ALLOW_PRIVATE_DESTINATIONS", "false"}},
                        DnsServer::WithResolvConf(resolv_conf));
    const auto asked = std::chrono::steady_clock::now();
    auto refused = api.Call("POST", "/v1/destinations",
                            {{"url", "http://slow.example.test:" + port + "/slow"}});
    EXPECT_EQ(refused.status, 422) << refused.body;
    EXPECT_LT(std::chrono::steady_clock::now() - asked, 10s);
    EXPECT_NE(refused.body.find("destination address not allowed"), std::string::npos)
        << refused.body;
    EXPECT_EQ(api.Call("GET", "/healthz").status, 200);
  }
  auto fast = webhookd.Call(
      "POST", "/v1/destinations",
      {{"url", "http://fast.example.test:" + port + "/fast"}, {"event_types", {"fast.*"}}});
  ASSERT_EQ(fast.status, 201) << fast.body;
  // The silent destination as an earlier, answering DNS would have let it in.
  db.Exec("INSERT INTO destinations (url, secret, event_types) VALUES ('http://slow.example.test:" +
          port + "/slow', 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', '{slow.*}')");

  // Eight silent names at once: more than the four lookups the old pool could hold.
  for (int i = 0; i < 8; ++i) {
    ASSERT_EQ(
        webhookd.Call("POST", "/v1/events", {{"type", "slow.x"}, {"payload", {{"i", i}}}}).status,
        202);
  }
  std::this_thread::sleep_for(200ms);
  const auto posted = std::chrono::steady_clock::now();
  for (int i = 0; i < 8; ++i) {
    ASSERT_EQ(
        webhookd.Call("POST", "/v1/events", {{"type", "fast.x"}, {"payload", {{"i", i}}}}).status,
        202);
  }
  ASSERT_TRUE(receiver.WaitFor(8, 10s)) << "named deliveries waited behind the silent lookups";
  EXPECT_LT(std::chrono::steady_clock::now() - posted, 10s);

  // Each silent one ends as its own attempt's timeout, not the resolver's 30 s.
  EXPECT_TRUE(WaitUntil(
      [&] {
        return db.Scalar(
                   "SELECT count(*) FROM attempts a JOIN deliveries d ON d.id = "
                   "a.delivery_id JOIN events e ON e.id = d.event_id WHERE e.type = "
                   "'slow.x'") == "8";
      },
      15s));
  EXPECT_EQ(db.Scalar("SELECT string_agg(DISTINCT a.error, '|') FROM attempts a JOIN "
                      "deliveries d ON d.id = a.delivery_id JOIN events e ON e.id = "
                      "d.event_id WHERE e.type = 'slow.x'"),
            "timed out after 2000 ms");
  EXPECT_GT(dns.queries(), 0);
  EXPECT_EQ(receiver.count(), 8u);
}

}  // namespace
}  // namespace webhookd::testing::dns_fault_test
