// Feed reads that wait: each is answered exactly once, by a wake-up, the end of its wait
// or Stop; past the cap a read is refused a place (and answered at once by its caller).
#include "server/feed_waiters.h"

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <vector>

namespace webhookd::feed_waiters_test {
namespace {

using namespace std::chrono_literals;
using Woken = FeedWaiters::Woken;
using Clock = FeedWaiters::Clock;

// What the waiters answered, in order; Await bounds every wait at 5 s.
class Answers {
 public:
  FeedWaiters::Callback Add() {
    return [this](Woken w) {
      std::lock_guard lock(mu_);
      got_.push_back(w);
      cv_.notify_all();
    };
  }
  std::vector<Woken> Await(size_t n) {
    std::unique_lock lock(mu_);
    cv_.wait_for(lock, 5s, [&] { return got_.size() >= n; });
    return got_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Woken> got_;
};

TEST(FeedWaitersTest, AWakeUpAnswersEveryWaiterArrived) {
  FeedWaiters waiters(nullptr);
  waiters.Start();
  Answers answers;
  const auto later = Clock::now() + 1h;
  ASSERT_TRUE(waiters.Wait(waiters.Generation(), later, answers.Add()));
  ASSERT_TRUE(waiters.Wait(waiters.Generation(), later, answers.Add()));
  waiters.Notify();
  EXPECT_EQ(answers.Await(2), std::vector<Woken>({Woken::kArrived, Woken::kArrived}));
  EXPECT_EQ(waiters.Waiting(), 0);
}

TEST(FeedWaitersTest, AWakeUpBeforeTheWaitBeganIsNotLost) {
  FeedWaiters waiters(nullptr);
  waiters.Start();
  Answers answers;
  const uint64_t seen = waiters.Generation();  // as a read does before it leases
  waiters.Notify();                            // a message arrives during the lease
  ASSERT_TRUE(waiters.Wait(seen, Clock::now() + 1h, answers.Add()));
  EXPECT_EQ(answers.Await(1), std::vector<Woken>({Woken::kArrived}));
}

TEST(FeedWaitersTest, TheEndOfTheWaitAnswersTimedOutInTheOrderOfTheirEnds) {
  FeedWaiters waiters(nullptr);
  waiters.Start();
  Answers answers;
  std::optional<Woken> far;
  ASSERT_TRUE(waiters.Wait(waiters.Generation(), Clock::now() + 1h, [&](Woken w) { far = w; }));
  ASSERT_TRUE(waiters.Wait(waiters.Generation(), Clock::now() + 50ms, answers.Add()));
  EXPECT_EQ(answers.Await(1), std::vector<Woken>({Woken::kTimedOut}));
  EXPECT_EQ(waiters.Waiting(), 1);
  waiters.Stop();
  EXPECT_EQ(far, Woken::kStopped);
}

TEST(FeedWaitersTest, PastTheCapAndAfterStopAReadGetsNoPlace) {
  FeedWaiters waiters(nullptr, /*max_waiters=*/2);
  waiters.Start();
  Answers answers;
  const auto later = Clock::now() + 1h;
  EXPECT_TRUE(waiters.Wait(0, later, answers.Add()));
  EXPECT_TRUE(waiters.Wait(0, later, answers.Add()));
  EXPECT_FALSE(waiters.Wait(0, later, answers.Add()));
  waiters.Stop();
  EXPECT_EQ(answers.Await(2), std::vector<Woken>({Woken::kStopped, Woken::kStopped}));
  EXPECT_FALSE(waiters.Wait(0, later, answers.Add()));
}

}  // namespace
}  // namespace webhookd::feed_waiters_test
