// Feed reads that wait: each is answered exactly once, by a wake-up, the end of its wait
// or Stop; past the cap a read is refused a place (and answered at once by its caller).
#include "server/feed_waiters.h"

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <span>
#include <thread>
#include <vector>

#include "base/result.h"

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
  ASSERT_TRUE(waiters.Wait(1, waiters.Generation(), later, answers.Add()));
  ASSERT_TRUE(waiters.Wait(1, waiters.Generation(), later, answers.Add()));
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
  ASSERT_TRUE(waiters.Wait(1, seen, Clock::now() + 1h, answers.Add()));
  EXPECT_EQ(answers.Await(1), std::vector<Woken>({Woken::kArrived}));
}

TEST(FeedWaitersTest, TheEndOfTheWaitAnswersTimedOutInTheOrderOfTheirEnds) {
  FeedWaiters waiters(nullptr);
  waiters.Start();
  Answers answers;
  std::optional<Woken> far;
  ASSERT_TRUE(waiters.Wait(1, waiters.Generation(), Clock::now() + 1h, [&](Woken w) { far = w; }));
  ASSERT_TRUE(waiters.Wait(1, waiters.Generation(), Clock::now() + 50ms, answers.Add()));
  EXPECT_EQ(answers.Await(1), std::vector<Woken>({Woken::kTimedOut}));
  EXPECT_EQ(waiters.Waiting(), 1);
  waiters.Stop();
  EXPECT_EQ(far, Woken::kStopped);
}

TEST(FeedWaitersTest, PastTheCapAndAfterStopAReadGetsNoPlace) {
  FeedWaiters waiters(nullptr, nullptr, /*max_waiters=*/2);
  waiters.Start();
  Answers answers;
  const auto later = Clock::now() + 1h;
  EXPECT_TRUE(waiters.Wait(1, 0, later, answers.Add()));
  EXPECT_TRUE(waiters.Wait(1, 0, later, answers.Add()));
  EXPECT_FALSE(waiters.Wait(1, 0, later, answers.Add()));
  waiters.Stop();
  EXPECT_EQ(answers.Await(2), std::vector<Woken>({Woken::kStopped, Woken::kStopped}));
  EXPECT_FALSE(waiters.Wait(1, 0, later, answers.Add()));
}

// A wake-up asks the probe once for every waiting feed and answers the waiters of the
// feeds it names; the others keep waiting for the next wake-up or their end.
TEST(FeedWaitersTest, AWakeUpProbesOnceAndAnswersOnlyTheReadsOfFeedsWithMessages) {
  std::mutex mu;
  std::vector<std::vector<int64_t>> probed;
  std::vector<int64_t> ready = {7};
  FeedWaiters waiters(nullptr, [&](std::span<const int64_t> feeds) -> Result<std::vector<int64_t>> {
    std::lock_guard lock(mu);
    probed.emplace_back(feeds.begin(), feeds.end());
    return ready;
  });
  waiters.Start();
  Answers seven;
  std::vector<std::optional<Woken>> others(100);
  const auto later = Clock::now() + 1h;
  // A hundred reads of a hundred feeds, two of them of feed 7.
  for (int64_t feed = 0; feed < 100; ++feed) {
    if (feed == 7) continue;
    ASSERT_TRUE(waiters.Wait(feed, waiters.Generation(), later,
                             [&others, feed](Woken w) { others[feed] = w; }));
  }
  ASSERT_TRUE(waiters.Wait(7, waiters.Generation(), later, seven.Add()));
  ASSERT_TRUE(waiters.Wait(7, waiters.Generation(), later, seven.Add()));
  waiters.Wake();
  EXPECT_EQ(seven.Await(2), std::vector<Woken>({Woken::kArrived, Woken::kArrived}));
  {
    std::lock_guard lock(mu);
    ASSERT_EQ(probed.size(), 1u);
    EXPECT_EQ(probed[0].size(), 100u);  // each feed once
    EXPECT_TRUE(std::is_sorted(probed[0].begin(), probed[0].end()));
  }
  EXPECT_EQ(waiters.Waiting(), 99);
  // Nothing ready: nobody is answered, and the probe is asked again.
  ready = {};
  waiters.Wake();
  EXPECT_EQ(waiters.Waiting(), 99);
  // Feed 3 ready.
  ready = {3};
  waiters.Wake();
  for (int i = 0; i < 500 && waiters.Waiting() != 98; ++i) std::this_thread::sleep_for(10ms);
  EXPECT_EQ(waiters.Waiting(), 98);
  waiters.Stop();
  EXPECT_EQ(others[3], Woken::kArrived);
  EXPECT_EQ(others[4], Woken::kStopped);
  std::lock_guard lock(mu);
  EXPECT_EQ(probed.size(), 3u);
}

// A read that leased while a wake-up was probed (so it was not among the feeds asked
// about) leases again; when the probe fails, every read does.
TEST(FeedWaitersTest, AReadBetweenItsLeaseAndItsWaitAndAFailedProbeWakeEveryone) {
  bool fail = false;
  FeedWaiters waiters(nullptr, [&](std::span<const int64_t>) -> Result<std::vector<int64_t>> {
    if (fail) return Fail(ErrorKind::kUnavailable, "probe down");
    return std::vector<int64_t>{};
  });
  waiters.Start();
  Answers answers;
  const auto later = Clock::now() + 1h;
  ASSERT_TRUE(waiters.Wait(1, waiters.Generation(), later, [](Woken) {}));
  const uint64_t seen = waiters.Generation();  // the read takes it, then leases
  waiters.Wake();                              // meanwhile: probed without it, nothing ready
  ASSERT_TRUE(waiters.Wait(2, seen, later, answers.Add()));
  EXPECT_EQ(answers.Await(1), std::vector<Woken>({Woken::kArrived}));
  ASSERT_TRUE(waiters.Wait(2, waiters.Generation(), later, answers.Add()));
  fail = true;
  waiters.Wake();
  EXPECT_EQ(answers.Await(2), std::vector<Woken>({Woken::kArrived, Woken::kArrived}));
  for (int i = 0; i < 500 && waiters.Waiting() != 0; ++i) std::this_thread::sleep_for(10ms);
  EXPECT_EQ(waiters.Waiting(), 0);
}

}  // namespace
}  // namespace webhookd::feed_waiters_test
