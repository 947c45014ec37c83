// A worker that lost its lease changes nothing when it comes back (docs/architecture.md: "every
// change to a claimed delivery presents the claim's token"). Worker A claims deliveries
// and is SIGSTOPped while the receiver holds its requests; its 2 s lease runs out; worker
// B claims and delivers the same deliveries; then A gets SIGCONT, finishes its stale
// sends and tries to record them. Two moments for A's return: after B has recorded
// (the status guard alone would already stop A) and while B still holds the claim (only
// the claim token stops A then).
#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <pqxx/pqxx>
#include <thread>

#include "tests/testing/receiver.h"
#include "tests/testing/test_database.h"
#include "tests/testing/webhookd_process.h"

namespace webhookd::testing::stale_worker_fault_test {
namespace {

using Json = nlohmann::json;
using namespace std::chrono_literals;
using Ms = std::chrono::milliseconds;

constexpr int kDeliveries = 10;
constexpr Ms kHold = 1500ms;  // how long the receiver holds a request

// Worker A, the one that goes stale: a lease it cannot keep while stopped.
const std::map<std::string, std::string> kStaleEnv = {
    {"WEBHOOKD_LEASE", "2s"},
    {"WEBHOOKD_ATTEMPT_TIMEOUT", "1s"},
    {"WEBHOOKD_RETRY_SCHEDULE", "1h"},  // a retry would never be due within the test
    {"WEBHOOKD_LOG_LEVEL", "debug"},    // one "attempt" line per finished send
};
// Worker B: time enough to hold its own claims while the receiver holds its requests.
const std::map<std::string, std::string> kNewEnv = {
    {"WEBHOOKD_LEASE", "6s"},
    {"WEBHOOKD_ATTEMPT_TIMEOUT", "4s"},
    {"WEBHOOKD_RETRY_SCHEDULE", "1h"},
    {"WEBHOOKD_LOG_LEVEL", "debug"},
};

bool WaitUntil(const std::function<bool()>& done, Ms timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(20ms);
  }
  return done();
}

int CountOf(const std::string& text, const std::string& needle) {
  int n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

class StaleWorkerFaultTest : public ::testing::Test {
 protected:
  void SetUp() override {
    receiver_ = std::make_unique<Receiver>([this](const Received&, int) {
      Answer a;
      a.delay = hold_new_ ? Ms(hold_new_.load()) : (first_phase_ ? kHold : Ms(0));
      return a;
    });
    server_ = std::make_unique<WebhookdProcess>(db_.url(), "server", kStaleEnv);
    auto res = server_->Call("POST", "/v1/destinations", {{"url", receiver_->url()}});
    ASSERT_EQ(res.status, 201) << res.body;
    for (int i = 0; i < kDeliveries; ++i) {
      res = server_->Call("POST", "/v1/events", {{"type", "stale.test"}, {"payload", {{"i", i}}}});
      ASSERT_EQ(res.status, 202) << res.body;
    }
    // A claims every delivery and sends each; the receiver holds them all.
    stale_ = std::make_unique<WebhookdProcess>(db_.url(), "worker", kStaleEnv);
    ASSERT_TRUE(receiver_->WaitFor(kDeliveries, 20s)) << "worker A never sent";
    stale_->process().Signal(SIGSTOP);
    stopped_at_ = db_.Scalar("SELECT clock_timestamp()::text");
    for (const auto& [id, token] : Tokens()) {
      ASSERT_FALSE(token.empty()) << "delivery " << id << " is not claimed by A";
      stale_tokens_[id] = token;
    }
    ASSERT_EQ(stale_tokens_.size(), static_cast<size_t>(kDeliveries));
    ASSERT_EQ(StaleLogLines(), 0) << "A finished a send before it was stopped";
  }

  void TearDown() override {
    if (stale_) stale_->process().Signal(SIGCONT);
  }

  // delivery id -> claim token ("" when none).
  std::map<std::string, std::string> Tokens() {
    std::map<std::string, std::string> tokens;
    pqxx::connection conn(db_.url());
    pqxx::nontransaction tx(conn);
    for (const auto& row :
         tx.exec("SELECT id, claim_token FROM " + testing::kDeliveryState + " dr"))
      tokens[row[0].c_str()] = row[1].is_null() ? "" : row[1].c_str();
    return tokens;
  }
  // Every column of every delivery, in one string.
  std::string Deliveries() {
    return db_.Scalar("SELECT string_agg(d::text, '|' ORDER BY id) FROM " +
                      testing::kDeliveryState + " d");
  }
  int64_t Count(const std::string& sql) { return std::stoll(db_.Scalar(sql)); }
  int StaleLogLines() { return CountOf(ReadFile(stale_->log_path()), "\"msg\":\"attempt\""); }
  bool AllSucceeded() {
    return Count("SELECT count(*) FROM " + testing::kDeliveryState +
                 " dr WHERE status = 'succeeded'") == kDeliveries;
  }

  // What must hold at the end, whenever A came back.
  void ExpectNothingFromTheStaleWorker() {
    EXPECT_TRUE(AllSucceeded()) << Deliveries();
    EXPECT_EQ(Count("SELECT count(*) FROM attempts"), kDeliveries)
        << "attempt rows beyond B's one per delivery";
    EXPECT_EQ(Count("SELECT count(*) FROM " + testing::kDeliveryState +
                    " d WHERE attempt_count <> 1 OR (SELECT "
                    "count(*) FROM attempts a WHERE a.delivery_id = d.id AND a.outcome = "
                    "'success') <> 1"),
              0)
        << "a delivery without exactly one success attempt";
    EXPECT_EQ(Count("SELECT count(*) FROM attempts WHERE started_at < '" + stopped_at_ +
                    "'::timestamptz"),
              0)
        << "an attempt row of a send that started before A was stopped: A's";
    EXPECT_EQ(Count("SELECT count(*) FROM dead_letters"), 0);
  }

  TestDatabase db_;
  std::atomic<bool> first_phase_{true};
  std::atomic<int> hold_new_{0};  // ms B's requests are held (0: answer at once)
  std::unique_ptr<Receiver> receiver_;
  std::unique_ptr<WebhookdProcess> server_;
  std::unique_ptr<WebhookdProcess> stale_;
  std::unique_ptr<WebhookdProcess> fresh_;
  std::string stopped_at_;
  std::map<std::string, std::string> stale_tokens_;
};

TEST_F(StaleWorkerFaultTest, AStaleWorkerChangesNoRowAfterTheNewOwnerFinished) {
  first_phase_ = false;  // B's sends are answered at once
  fresh_ = std::make_unique<WebhookdProcess>(db_.url(), "worker", kNewEnv);
  ASSERT_TRUE(WaitUntil([&] { return AllSucceeded(); }, 20s))
      << "B did not deliver after A's lease ran out: " << Deliveries();
  ASSERT_EQ(receiver_->count(), 2u * kDeliveries);

  const std::string before = Deliveries();
  const int64_t attempts_before = Count("SELECT count(*) FROM attempts");
  stale_->process().Signal(SIGCONT);
  // A wakes past its attempt timeout: each stale send ends and A tries to record it.
  EXPECT_TRUE(WaitUntil([&] { return StaleLogLines() >= kDeliveries; }, 15s))
      << "A did not finish its stale sends after SIGCONT: " << ReadFile(stale_->log_path());
  std::this_thread::sleep_for(1500ms);  // settle: A's outcomes would be written by now

  EXPECT_EQ(Deliveries(), before) << "a row changed after the stale worker came back";
  EXPECT_EQ(Count("SELECT count(*) FROM attempts"), attempts_before)
      << "the stale worker wrote attempt rows after SIGCONT";
  ExpectNothingFromTheStaleWorker();
  EXPECT_EQ(receiver_->count(), 2u * kDeliveries) << "nothing is sent a third time";
  EXPECT_TRUE(stale_->process().Running()) << "A crashed on coming back";
}

TEST_F(StaleWorkerFaultTest, AStaleWorkerChangesNoRowWhileTheNewOwnerHoldsTheClaim) {
  hold_new_ = 2000;  // B's sends are held, so B holds its claims when A comes back
  fresh_ = std::make_unique<WebhookdProcess>(db_.url(), "worker", kNewEnv);
  // B has claimed every delivery anew: each holds a token that is not A's.
  ASSERT_TRUE(WaitUntil(
      [&] {
        for (const auto& [id, token] : Tokens()) {
          if (token.empty() || token == stale_tokens_[id]) return false;
        }
        return true;
      },
      20s))
      << "B did not claim after A's lease ran out: " << Deliveries();
  ASSERT_TRUE(receiver_->WaitFor(2 * kDeliveries, 10s));

  const int64_t attempts_before = Count("SELECT count(*) FROM attempts");
  EXPECT_EQ(attempts_before, 0);
  stale_->process().Signal(SIGCONT);
  // While A records its stale outcomes, no delivery may move: each stays B's claim
  // (in_flight, B's token) until B records its success.
  std::string moved;
  const bool came_back = WaitUntil(
      [&] {
        pqxx::connection conn(db_.url());
        pqxx::nontransaction tx(conn);
        for (const auto& row :
             tx.exec("SELECT id, status, claim_token FROM " + testing::kDeliveryState + " dr")) {
          const std::string status = row[1].c_str();
          if (status == "succeeded") continue;
          if (status != "in_flight" || row[2].is_null() ||
              row[2].c_str() == stale_tokens_[row[0].c_str()]) {
            moved = std::string(row[0].c_str()) + " " + status;
          }
        }
        return StaleLogLines() >= kDeliveries;
      },
      15s);
  EXPECT_TRUE(came_back) << "A did not finish its stale sends after SIGCONT";
  EXPECT_TRUE(moved.empty()) << "delivery moved by the stale worker: " << moved;
  EXPECT_TRUE(WaitUntil([&] { return AllSucceeded(); }, 20s)) << Deliveries();
  std::this_thread::sleep_for(1500ms);  // settle

  ExpectNothingFromTheStaleWorker();
  EXPECT_EQ(receiver_->count(), 2u * kDeliveries) << "nothing is sent a third time";
  EXPECT_TRUE(stale_->process().Running()) << "A crashed on coming back";
}

}  // namespace
}  // namespace webhookd::testing::stale_worker_fault_test
