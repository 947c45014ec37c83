#include "worker/purger.h"

#include <gtest/gtest.h>

#include <chrono>
#include <deque>
#include <mutex>
#include <vector>

#include "base/metrics.h"

namespace webhookd {
namespace {

using namespace std::chrono_literals;

// Answers each PurgeExpired with the next scripted count (or error), then 0.
class ScriptedRetention final : public RetentionStore {
 public:
  explicit ScriptedRetention(std::deque<Result<int64_t>> answers) : answers_(std::move(answers)) {}

  // RetentionStore:
  Result<int64_t> PurgeExpired(Duration retention, int batch) override {
    std::lock_guard lock(mu_);
    calls_.push_back({retention, batch});
    if (answers_.empty()) return int64_t{0};
    auto next = answers_.front();
    answers_.pop_front();
    return next;
  }

  struct Call {
    Duration retention;
    int batch;
  };
  std::vector<Call> calls() {
    std::lock_guard lock(mu_);
    return calls_;
  }

 private:
  std::mutex mu_;
  std::deque<Result<int64_t>> answers_;
  std::vector<Call> calls_;
};

Purger::Options Every(Duration every) { return Purger::Options{24h, every, 10}; }

TEST(PurgerTest, ARoundPurgesBatchesWhileTheyComeBackFull) {
  ScriptedRetention store({int64_t{10}, int64_t{10}, int64_t{3}, int64_t{10}});
  Metrics metrics;
  Purger purger(store, Every(1h), &metrics);
  EXPECT_EQ(purger.PurgeOnce(), 23);  // 10 + 10 + 3: the short batch ends the round
  ASSERT_EQ(store.calls().size(), 3u);
  EXPECT_EQ(store.calls()[0].retention, Duration(24h));
  EXPECT_EQ(store.calls()[0].batch, 10);
  EXPECT_EQ(metrics.purged_events.value(), 23u);
  EXPECT_EQ(purger.PurgeOnce(), 10);  // the next round picks up where it stopped
}

TEST(PurgerTest, ARoundIsBoundedToAHundredBatches) {
  std::deque<Result<int64_t>> full(150, int64_t{10});
  ScriptedRetention store(std::move(full));
  Purger purger(store, Every(1h), nullptr);
  EXPECT_EQ(purger.PurgeOnce(), 1000);
  EXPECT_EQ(store.calls().size(), 100u);
}

TEST(PurgerTest, AFailureEndsTheRoundAndIsTriedAgainNextRound) {
  ScriptedRetention store(
      {int64_t{10}, Fail(ErrorKind::kUnavailable, "database down"), int64_t{4}});
  Purger purger(store, Every(1h), nullptr);
  EXPECT_EQ(purger.PurgeOnce(), 10);
  EXPECT_EQ(store.calls().size(), 2u);
  EXPECT_EQ(purger.PurgeOnce(), 4);
}

TEST(PurgerTest, TheThreadPurgesAtOnceThenEveryPeriodAndStopsPromptly) {
  ScriptedRetention store({});
  Purger purger(store, Every(1h), nullptr);
  purger.Start();
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (store.calls().empty() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(1ms);
  }
  EXPECT_EQ(store.calls().size(), 1u);  // the first round at start, the next an hour away
  purger.Stop();  // wakes the hour-long wait: a Stop that slept it out would time the test out
  EXPECT_EQ(store.calls().size(), 1u);
}

}  // namespace
}  // namespace webhookd
