// Secret rotation checked by the Standard Webhooks reference library (the npm package
// `standardwebhooks`, pinned in tests/verifier) instead of webhookd's own signing or the
// OpenSSL recomputation of the other tests. Each receiver verifies every request with it
// and answers 204 when it verifies, 401 (a permanent failure) when not, as a receiver in
// production would: during a rotation's grace a receiver still on the old secret and one
// already on the new one both take the delivery; after the grace the old one refuses it.
//
// Needs node and `npm ci` in tests/verifier (scripts/test runs it); skipped otherwise.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include "tests/testing/process.h"
#include "tests/testing/receiver.h"
#include "tests/testing/test_database.h"
#include "tests/testing/wait.h"
#include "tests/testing/webhookd_process.h"

namespace webhookd::testing::standard_webhooks_e2e_test {
namespace {

using Json = nlohmann::json;
using namespace std::chrono_literals;

constexpr const char* kOld = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
constexpr const char* kNew = "whsec_dGhlIG5ldyBzZWNyZXQgb2YgdGhlIGRlc3RpbmF0aW9u";
constexpr auto kGrace = 8s;

const std::string kVerifierDir = std::string(WEBHOOKD_SOURCE_DIR) + "/tests/verifier";

// The node executable on PATH, or "".
std::string FindNode() {
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path != nullptr ? path : "");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    const std::string candidate = dir + "/node";
    if (!dir.empty() && ::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

// Runs tests/verifier/verify.mjs on one received request: 0 when a signature of its
// header verifies with `secret`, 1 when none does, anything else when it could not run.
int Verify(const std::string& node, const Received& r, const std::string& secret) {
  static std::atomic<int> runs{0};
  const std::string stem =
      TestLogDir() + "/verifier-" + std::to_string(::getpid()) + "-" + std::to_string(++runs);
  // The body goes through a file: its bytes exactly, whatever they hold.
  std::ofstream(stem + ".body", std::ios::binary) << r.body;
  Process verifier({node, kVerifierDir + "/verify.mjs", stem + ".body", r.header("webhook-id"),
                    r.header("webhook-timestamp"), r.header("webhook-signature")},
                   {{"VERIFY_SECRET", secret}}, stem + ".log");
  const std::optional<int> code = verifier.Wait(30s);
  ::unlink((stem + ".body").c_str());
  return code.value_or(-1);
}

// A receiver that takes a request only when the library verifies it with `secret`.
Receiver::Script VerifyingWith(const std::string& node, std::string secret,
                               std::atomic<int>& unrunnable) {
  return [&node, &unrunnable, secret = std::move(secret)](const Received& r, int) {
    const int code = Verify(node, r, secret);
    if (code != 0 && code != 1) ++unrunnable;
    return Status(code == 0 ? 204 : 401);
  };
}

// The status of the event's one delivery once it is terminal ("" if it never is).
std::string FinalStatus(const WebhookdProcess& webhookd, const std::string& event_id) {
  std::string status;
  WaitUntil(
      [&] {
        auto r = webhookd.Call("GET", "/v1/events/" + event_id);
        if (r.status != 200) return false;
        const Json deliveries = Json::parse(r.body)["deliveries"];
        if (deliveries.size() != 1) return false;
        status = deliveries[0]["status"];
        return status == "succeeded" || status == "dead_lettered";
      },
      20s);
  return status == "succeeded" || status == "dead_lettered" ? status : "";
}

TEST(StandardWebhooksE2eTest, OldAndNewSecretVerifyDuringTheGraceAndOnlyTheNewAfter) {
  const std::string node = FindNode();
  if (node.empty() || ::access((kVerifierDir + "/node_modules/standardwebhooks").c_str(), R_OK)) {
    GTEST_SKIP() << "needs node and `npm ci` in tests/verifier (scripts/test runs it)";
  }
  TestDatabase db;
  WebhookdProcess webhookd(db.url(), "all");
  std::atomic<int> unrunnable{0};
  Receiver on_old(VerifyingWith(node, kOld, unrunnable));
  Receiver on_new(VerifyingWith(node, kNew, unrunnable));
  // One destination per receiver, each signing with the old secret, each event type its own.
  std::map<std::string, std::string> destinations;  // event type -> destination id
  for (auto [type, receiver] : {std::pair{"old", &on_old}, std::pair{"new", &on_new}}) {
    auto created =
        webhookd.Call("POST", "/v1/destinations",
                      {{"url", receiver->url()}, {"secret", kOld}, {"event_types", {type}}});
    ASSERT_EQ(created.status, 201) << created.body;
    destinations[type] = Json::parse(created.body)["id"];
  }
  const auto publish = [&](const std::string& type) {
    auto r = webhookd.Call("POST", "/v1/events", {{"type", type}, {"payload", {{"n", 1}}}});
    EXPECT_EQ(r.status, 202) << r.body;
    return r.status == 202 ? Json::parse(r.body)["id"].get<std::string>() : "";
  };

  // Before any rotation the receiver on the new secret cannot verify: the library does
  // refuse what it should.
  EXPECT_EQ(FinalStatus(webhookd, publish("new")), "dead_lettered");

  const auto rotated_at = std::chrono::steady_clock::now();
  for (const auto& [type, id] : destinations) {
    auto rotated = webhookd.Call("POST", "/v1/destinations/" + id + "/secret/rotate",
                                 {{"secret", kNew}, {"grace_period", "8s"}});
    ASSERT_EQ(rotated.status, 200) << rotated.body;
  }
  // Each grace ends 8 s after its own rotation, the last no later than this.
  const auto all_rotated = std::chrono::steady_clock::now();
  const std::string old_during = publish("old");
  const std::string new_during = publish("new");
  EXPECT_EQ(FinalStatus(webhookd, old_during), "succeeded");
  EXPECT_EQ(FinalStatus(webhookd, new_during), "succeeded");
  // The assertions above mean something only if both were sent within the grace.
  ASSERT_LT(std::chrono::steady_clock::now() - rotated_at, kGrace)
      << "too slow to deliver within the grace period; nothing was checked";

  std::this_thread::sleep_until(all_rotated + kGrace + 500ms);
  EXPECT_EQ(FinalStatus(webhookd, publish("old")), "dead_lettered");
  EXPECT_EQ(FinalStatus(webhookd, publish("new")), "succeeded");
  EXPECT_EQ(unrunnable.load(), 0) << "the verifier failed to run; see " << TestLogDir()
                                  << "/verifier-*.log";
}

}  // namespace
}  // namespace webhookd::testing::standard_webhooks_e2e_test
