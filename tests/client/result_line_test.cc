#include "client/result_line.h"

#include <gtest/gtest.h>

namespace webhookd::client::result_line_test {
namespace {

PublishResult Result(PublishResult::Outcome outcome, int status, std::string body,
                     std::string error = "", int attempts = 1) {
  PublishResult r;
  r.outcome = outcome;
  r.status = status;
  r.body = std::move(body);
  r.error = std::move(error);
  r.attempts = attempts;
  r.idempotency_key = "k1";
  return r;
}

TEST(ResultLineTest, AnAcceptedEventPrintsTheApisAnswer) {
  const auto ok = PublishResult::Outcome::kAccepted;
  EXPECT_EQ(ResultLine(Result(ok, 202,
                              R"({"id":"evt_1"})"
                              "\n"),
                       3),
            R"({"id":"evt_1"})");
  // Still one line when the answer spans several.
  EXPECT_EQ(ResultLine(Result(ok, 202, "{\n  \"id\": \"evt_1\"\n}"), std::nullopt),
            R"({"id":"evt_1"})");
  EXPECT_EQ(ResultLine(Result(ok, 202, "accepted"), std::nullopt),
            R"({"status":202,"body":"accepted"})");
}

TEST(ResultLineTest, ARefusalPrintsTheProblem) {
  EXPECT_EQ(ResultLine(Result(PublishResult::Outcome::kRefused, 422,
                              R"({"title":"Unprocessable","status":422})", "HTTP 422"),
                       4),
            R"({"error":{"title":"Unprocessable","status":422},"status":422,"attempts":1,)"
            R"("idempotency_key":"k1","line":4})");
  EXPECT_EQ(
      ResultLine(Result(PublishResult::Outcome::kRefused, 401, "no", "HTTP 401"), std::nullopt),
      R"({"error":"HTTP 401","status":401,"attempts":1,"idempotency_key":"k1"})");
}

TEST(ResultLineTest, GivingUpPrintsWhy) {
  EXPECT_EQ(ResultLine(Result(PublishResult::Outcome::kGaveUp, 0, "", "timed out", 6), 1),
            R"({"error":"timed out","status":null,"attempts":6,"idempotency_key":"k1","line":1})");
  EXPECT_EQ(
      ResultLine(Result(PublishResult::Outcome::kGaveUp, 503, "{}", "HTTP 503", 6), std::nullopt),
      R"({"error":"HTTP 503","status":503,"attempts":6,"idempotency_key":"k1"})");
}

TEST(ResultLineTest, ABadLineWasNotSent) {
  EXPECT_EQ(BadLineResultLine("not a JSON object", 9),
            R"({"error":"line 9: not a JSON object","status":null,"attempts":0,"line":9})");
}

}  // namespace
}  // namespace webhookd::client::result_line_test
