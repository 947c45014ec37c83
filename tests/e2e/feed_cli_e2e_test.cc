// `webhookd feed` (cmd/webhookd/feed.cc) against a real database: a feed's messages read
// as JSON lines, acked by id or with --ack, a read that waits for a message published
// meanwhile, and the API's refusals as problems.
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/testing/test_database.h"
#include "tests/testing/webhookd_process.h"

namespace webhookd::testing::feed_cli_e2e_test {
namespace {

using Json = nlohmann::json;
using namespace std::chrono_literals;

// The JSON objects a command printed, one a line, without log lines (those carry "ts").
std::vector<Json> PrintedLines(const std::string& out) {
  std::vector<Json> lines;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    Json j = Json::parse(line, nullptr, false);
    if (j.is_object() && !j.contains("ts")) lines.push_back(std::move(j));
  }
  return lines;
}

class FeedCliE2eTest : public ::testing::Test {
 protected:
  FeedCliE2eTest() : webhookd_(db_.url(), "server") {}

  std::string Publish(int n) {
    auto res =
        webhookd_.Call("POST", "/v1/events", {{"type", "order.created"}, {"payload", {{"n", n}}}});
    EXPECT_EQ(res.status, 202) << res.body;
    return Json::parse(res.body)["id"];
  }

  std::pair<int, std::string> Run(std::vector<std::string> args) {
    args.insert(args.begin(), "feed");
    return WebhookdProcess::RunCommand(args, {{"DATABASE_URL", db_.url()}});
  }

  TestDatabase db_;
  WebhookdProcess webhookd_;
};

TEST_F(FeedCliE2eTest, MessagesAreReadAsJsonLinesAndAcked) {
  auto made = webhookd_.Call("POST", "/v1/destinations", {{"url", "feed:"}});
  ASSERT_EQ(made.status, 201) << made.body;
  const std::string feed = Json::parse(made.body)["id"];
  const std::string first = Publish(1);
  const std::string second = Publish(2);
  const std::string third = Publish(3);

  auto [read_code, read_out] = Run({"read", feed, "--limit", "2", "--lease", "1h"});
  ASSERT_EQ(read_code, 0) << read_out;
  const auto read = PrintedLines(read_out);
  ASSERT_EQ(read.size(), 2u) << read_out;
  EXPECT_EQ(read[0]["id"], first);
  EXPECT_EQ(read[1]["id"], second);
  EXPECT_EQ(Json::parse(read[0]["body"].get<std::string>())["data"], Json({{"n", 1}}));
  EXPECT_TRUE(read[0]["headers"].contains("webhook-signature"));

  auto [ack_code, ack_out] = Run({"ack", feed, first, second});
  ASSERT_EQ(ack_code, 0) << ack_out;
  ASSERT_EQ(PrintedLines(ack_out).size(), 1u) << ack_out;
  EXPECT_EQ(PrintedLines(ack_out)[0], Json({{"acked", 2}, {"expired", Json::array()}}));

  // --ack acks what it printed: nothing is left.
  auto [rest_code, rest_out] = Run({"read", feed, "--ack"});
  ASSERT_EQ(rest_code, 0) << rest_out;
  const auto rest = PrintedLines(rest_out);
  ASSERT_EQ(rest.size(), 2u) << rest_out;  // the message, then the ack's answer
  EXPECT_EQ(rest[0]["id"], third);
  EXPECT_EQ(rest[1]["acked"], 1);
  const auto delivery =
      webhookd_.Call("GET", "/v1/deliveries/" + rest[0]["delivery_id"].get<std::string>());
  EXPECT_EQ(Json::parse(delivery.body)["status"], "succeeded") << delivery.body;

  // A read that waits gets what is published meanwhile; with nothing, it prints nothing.
  auto waiting = std::async(std::launch::async, [&] {
    return Run({"read", feed, "--wait", "10"});
  });
  std::this_thread::sleep_for(1500ms);
  const std::string fourth = Publish(4);
  auto [wait_code, wait_out] = waiting.get();
  ASSERT_EQ(wait_code, 0) << wait_out;
  ASSERT_EQ(PrintedLines(wait_out).size(), 1u) << wait_out;
  EXPECT_EQ(PrintedLines(wait_out)[0]["id"], fourth);
  auto [empty_code, empty_out] = Run({"read", feed, "--wait", "1s"});
  EXPECT_EQ(empty_code, 0) << empty_out;
  EXPECT_TRUE(PrintedLines(empty_out).empty()) << empty_out;
}

TEST_F(FeedCliE2eTest, RefusalsAreTheApisProblemsAndUsageErrorsExitTwo) {
  auto made = webhookd_.Call("POST", "/v1/destinations", {{"url", "feed:"}});
  ASSERT_EQ(made.status, 201) << made.body;
  const std::string feed = Json::parse(made.body)["id"];
  auto [wait_code, wait_out] = Run({"read", feed, "--wait", "31"});
  EXPECT_EQ(wait_code, 1) << wait_out;
  ASSERT_EQ(PrintedLines(wait_out).size(), 1u) << wait_out;
  EXPECT_EQ(PrintedLines(wait_out)[0]["status"], 422);
  auto [unknown_code, unknown_out] = Run({"read", "dst_999999"});
  EXPECT_EQ(unknown_code, 1) << unknown_out;
  EXPECT_EQ(PrintedLines(unknown_out)[0]["status"], 404);
  auto [bad_code, bad_out] = Run({"ack", feed, "dst_1"});
  EXPECT_EQ(bad_code, 1) << bad_out;
  EXPECT_EQ(PrintedLines(bad_out)[0]["status"], 422);
  EXPECT_EQ(Run({"read"}).first, 2);
  EXPECT_EQ(Run({"ack", feed}).first, 2);
  EXPECT_EQ(Run({"peek", feed}).first, 2);
  EXPECT_EQ(Run({"read", feed, "--ack=yes"}).first, 2);
  auto [help_code, help_out] =
      WebhookdProcess::RunCommand({"feed", "--help"}, {{"DATABASE_URL", ""}});
  EXPECT_EQ(help_code, 0);
  EXPECT_NE(help_out.find("webhookd feed read DESTINATION"), std::string::npos) << help_out;
}

}  // namespace
}  // namespace webhookd::testing::feed_cli_e2e_test
