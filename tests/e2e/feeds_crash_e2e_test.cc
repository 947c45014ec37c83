// A feed's leases live in PostgreSQL, not in webhookd (docs/feeds.md): webhookd killed
// between a consumer's read and its ack loses nothing. A lease still running is acked
// through the next process; a lease that ends unacked brings its message back.
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <memory>
#include <set>
#include <string>
#include <thread>

#include "tests/testing/test_database.h"
#include "tests/testing/webhookd_process.h"

namespace webhookd::testing::feeds_crash_e2e_test {
namespace {

using Json = nlohmann::json;
using namespace std::chrono_literals;

constexpr const char* kSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const std::map<std::string, std::string> kEnv = {
    {"WEBHOOKD_RETRY_SCHEDULE", "100ms,100ms,100ms,100ms"}, {"WEBHOOKD_RETRY_JITTER", "0"}};

Json Call(const WebhookdProcess& webhookd, const std::string& method, const std::string& path,
          const Json& body = nullptr, int want = 200) {
  auto res = webhookd.Call(method, path, body);
  EXPECT_EQ(res.status, want) << method << " " << path << ": " << res.body;
  return !res.body.empty() ? Json::parse(res.body, nullptr, false) : Json::object();
}

TEST(FeedCrashE2eTest, AKillBetweenAReadAndItsAckLosesNothing) {
  TestDatabase db;
  auto first = std::make_unique<WebhookdProcess>(db.url(), "all", kEnv);
  const std::string feed =
      Call(*first, "POST", "/v1/destinations", {{"url", "feed:"}, {"secret", kSecret}}, 201)["id"];
  for (int n = 0; n < 10; ++n) {
    Call(*first, "POST", "/v1/events", {{"type", "order.created"}, {"payload", {{"n", n}}}}, 202);
  }
  const std::string messages = "/v1/destinations/" + feed + "/messages";
  const Json read = Call(*first, "GET", messages + "?limit=10&lease=10s");
  ASSERT_EQ(read["data"].size(), 10u) << read;

  first->process().Signal(SIGKILL);
  EXPECT_EQ(first->process().Wait(5s), 128 + SIGKILL);
  first.reset();
  WebhookdProcess second(db.url(), "all", kEnv);

  // The consumer acks half of what it read, through the new process, while its lease runs.
  Json half = Json::array();
  std::set<std::string> rest;
  for (size_t i = 0; i < 10; ++i) {
    const std::string id = read["data"][i]["id"];
    if (i % 2 == 0) {
      half.push_back(id);
    } else {
      rest.insert(id);
    }
  }
  EXPECT_EQ(Call(second, "POST", messages + "/ack", {{"ids", half}}),
            Json({{"acked", 5}, {"expired", Json::array()}}));

  // The other half come back once their lease ended, as a second attempt.
  Json again;
  for (int i = 0; i < 300; ++i) {
    again = Call(second, "GET", messages + "?limit=10&lease=60s");
    if (!again["data"].empty()) break;
    std::this_thread::sleep_for(100ms);
  }
  ASSERT_EQ(again["data"].size(), 5u) << again;
  std::set<std::string> back;
  Json ids = Json::array();
  for (const Json& m : again["data"]) {
    back.insert(m["id"].get<std::string>());
    ids.push_back(m["id"]);
    EXPECT_EQ(m["attempt"], 2) << m;
  }
  EXPECT_EQ(back, rest);
  EXPECT_EQ(Call(second, "POST", messages + "/ack", {{"ids", ids}}),
            Json({{"acked", 5}, {"expired", Json::array()}}));

  // Every delivery succeeded once; the unacked half with the ended lease on record first.
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM delivery_rows WHERE status = 'succeeded'"), "10");
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM attempts WHERE outcome = 'success'"), "10");
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM attempts WHERE error = 'lease expired'"), "5");
  EXPECT_EQ(Call(second, "GET", messages)["data"], Json::array());
}

}  // namespace
}  // namespace webhookd::testing::feeds_crash_e2e_test
