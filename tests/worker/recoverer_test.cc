#include "worker/recoverer.h"

#include <gtest/gtest.h>

#include <chrono>
#include <deque>
#include <mutex>
#include <thread>

#include "base/metrics.h"

namespace webhookd::recoverer_test {
namespace {

using namespace std::chrono_literals;

// Answers each RunRecoveries with the next scripted round (or error), then an idle one.
class ScriptedRecoveries final : public RecoveryStore {
 public:
  explicit ScriptedRecoveries(std::deque<Result<RecoveryRound>> answers)
      : answers_(std::move(answers)) {}

  // RecoveryStore:
  Result<Recovery> RequestRecovery(int64_t, Timestamp, std::optional<Timestamp>,
                                   const Scope&) override {
    return Fail(ErrorKind::kInternal, "not scripted");
  }
  Result<Recovery> GetRecovery(int64_t, const Scope&) override {
    return Fail(ErrorKind::kInternal, "not scripted");
  }
  Result<RecoveryRound> RunRecoveries(const RecoveryPace& pace, int max_pages) override {
    std::lock_guard lock(mu_);
    ++calls_;
    pace_ = pace;
    max_pages_ = max_pages;
    if (answers_.empty()) return RecoveryRound{};
    auto next = answers_.front();
    answers_.pop_front();
    return next;
  }

  int calls() {
    std::lock_guard lock(mu_);
    return calls_;
  }
  RecoveryPace pace() {
    std::lock_guard lock(mu_);
    return pace_;
  }
  int max_pages() {
    std::lock_guard lock(mu_);
    return max_pages_;
  }

 private:
  std::mutex mu_;
  std::deque<Result<RecoveryRound>> answers_;
  int calls_ = 0;
  RecoveryPace pace_;
  int max_pages_ = 0;
};

// Polls `done` every 5 ms for at most 5 s.
template <typename F>
bool Eventually(F done) {
  for (int i = 0; i < 1000; ++i) {
    if (done()) return true;
    std::this_thread::sleep_for(5ms);
  }
  return done();
}

TEST(RecovererTest, RoundsThatCanGoOnGoOnAtOnceAndCountTheirReplays) {
  ScriptedRecoveries store({RecoveryRound{.replayed = 500, .running = 1, .more = true},
                            RecoveryRound{.replayed = 500, .running = 1, .more = true},
                            RecoveryRound{.replayed = 20, .finished = 1}});
  Metrics metrics;
  // A round an hour: only `more` can start the next ones within the test.
  Recoverer recoverer(store, {.every = 1h, .pace = {.page = 7, .max_pending = 9}}, &metrics);
  recoverer.Start();
  ASSERT_TRUE(Eventually([&] { return store.calls() >= 3; })) << store.calls();
  recoverer.Stop();
  EXPECT_EQ(store.calls(), 3);
  EXPECT_EQ(metrics.replays.value(), 1020u);
  EXPECT_EQ(store.pace().page, 7);
  EXPECT_EQ(store.pace().max_pending, 9);
  EXPECT_EQ(store.max_pages(), Recoverer::kPages);
}

TEST(RecovererTest, AWaitingOrFailingRoundWaitsUntilWoken) {
  ScriptedRecoveries store(
      {RecoveryRound{.running = 1, .more = false}, Fail(ErrorKind::kUnavailable, "database down")});
  Recoverer recoverer(store, {.every = 1h, .pace = {}}, nullptr);
  recoverer.Start();
  ASSERT_TRUE(Eventually([&] { return store.calls() >= 1; }));
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(store.calls(), 1);
  // A recovery asked for starts a round now; a failed one waits again.
  recoverer.Wake();
  ASSERT_TRUE(Eventually([&] { return store.calls() >= 2; }));
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(store.calls(), 2);
  recoverer.Wake();
  ASSERT_TRUE(Eventually([&] { return store.calls() >= 3; }));
  recoverer.Stop();
}

}  // namespace
}  // namespace webhookd::recoverer_test
