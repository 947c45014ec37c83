#include "worker/purger.h"

#include <gtest/gtest.h>

#include <chrono>
#include <deque>
#include <mutex>
#include <string>
#include <vector>

#include "base/metrics.h"

namespace webhookd::purger_test {
namespace {

using namespace std::chrono_literals;

// Answers each PurgeExpired with the next scripted count (or error), then 0.
class ScriptedRetention final : public RetentionStore {
 public:
  explicit ScriptedRetention(std::deque<Result<int64_t>> answers) : answers_(std::move(answers)) {}

  // RetentionStore:
  Result<int> AddHistoryDays(int days_ahead) override {
    std::lock_guard lock(mu_);
    steps_.push_back("add " + std::to_string(days_ahead));
    return 0;
  }
  Result<DroppedDays> DropAgedDays(Timestamp cutoff, int max_days) override {
    std::lock_guard lock(mu_);
    steps_.push_back("drop " + std::to_string(max_days));
    cutoffs_.push_back(cutoff);
    if (drop_fails_) return Fail(ErrorKind::kUnavailable, "database down");
    return DroppedDays{.days = 1, .kept_events = 2};
  }
  Result<std::vector<HistoryPartition>> ListHistoryPartitions(Duration /*retention*/) override {
    return std::vector<HistoryPartition>{};
  }
  Result<int64_t> PurgeExpired(Duration retention, int batch) override {
    std::lock_guard lock(mu_);
    calls_.push_back({retention, batch});
    steps_.push_back("purge");
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
  std::vector<std::string> steps() {
    std::lock_guard lock(mu_);
    return steps_;
  }
  std::vector<Timestamp> cutoffs() {
    std::lock_guard lock(mu_);
    return cutoffs_;
  }
  void FailDrops() {
    std::lock_guard lock(mu_);
    drop_fails_ = true;
  }

 private:
  std::vector<std::string> steps_;
  std::vector<Timestamp> cutoffs_;
  bool drop_fails_ = false;
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

TEST(PurgerTest, ARoundAddsDaysAheadThenDropsAgedDaysThenPurgesTheKept) {
  ScriptedRetention store({int64_t{3}});
  Purger::Options options = Every(1h);
  options.days_ahead = 5;
  options.max_days = 2;
  Purger purger(store, options, nullptr);
  purger.Start();
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (store.calls().empty() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(1ms);
  }
  purger.Stop();
  EXPECT_EQ(store.steps(), (std::vector<std::string>{"add 5", "drop 2", "purge"}));
}

class FixedClock final : public Clock {
 public:
  Timestamp Now() override { return Timestamp(std::chrono::hours(1000)); }
};

TEST(PurgerTest, DaysEndedARetentionAgoAreDroppedAndNoneUnderRetentionZero) {
  ScriptedRetention store({});
  FixedClock clock;
  Purger::Options options = Every(1h);
  options.clock = &clock;
  Purger(store, options, nullptr).DropDaysOnce();
  options.retention = Duration::zero();
  Purger(store, options, nullptr).DropDaysOnce();
  ASSERT_EQ(store.cutoffs().size(), 2u);
  EXPECT_EQ(store.cutoffs()[0], Timestamp(std::chrono::hours(1000 - 24)));
  EXPECT_EQ(store.cutoffs()[1], Timestamp{});  // only a drop already begun goes on
}

TEST(PurgerTest, AFailedDropLeavesThePurgeToRun) {
  ScriptedRetention store({int64_t{3}});
  store.FailDrops();
  Purger purger(store, Every(1h), nullptr);
  EXPECT_EQ(purger.DropDaysOnce(), 0);
  EXPECT_EQ(purger.PurgeOnce(), 3);
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
}  // namespace webhookd::purger_test
