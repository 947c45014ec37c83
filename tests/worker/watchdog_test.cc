// The watchdog that bounds a whole delivery attempt: an armed deadline runs its abort, a
// disarmed one never does, and Disarm never returns while the abort is running.
#include "worker/watchdog.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace webhookd {
namespace {

using namespace std::chrono_literals;
using Steady = std::chrono::steady_clock;

bool WaitFor(const std::atomic<bool>& flag, std::chrono::milliseconds timeout) {
  const auto deadline = Steady::now() + timeout;
  while (!flag && Steady::now() < deadline) std::this_thread::sleep_for(1ms);
  return flag;
}

TEST(WatchdogTest, AnArmedDeadlineFiresTheAbort) {
  Watchdog watchdog;
  std::atomic<bool> fired{false};
  std::atomic<int64_t> fired_after_ms{-1};
  const auto armed = Steady::now();
  const uint64_t id = watchdog.Arm(armed + 100ms, [&] {
    fired_after_ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(Steady::now() - armed).count();
    fired = true;
  });
  ASSERT_TRUE(WaitFor(fired, 5s));
  EXPECT_GE(fired_after_ms.load(), 100);  // not before the deadline
  EXPECT_LT(fired_after_ms.load(), 1000);
  EXPECT_TRUE(watchdog.Disarm(id));  // reports that the abort ran
}

TEST(WatchdogTest, ADisarmedDeadlineNeverFires) {
  Watchdog watchdog;
  std::atomic<bool> fired{false};
  const uint64_t id = watchdog.Arm(Steady::now() + 100ms, [&] { fired = true; });
  EXPECT_FALSE(watchdog.Disarm(id));
  std::this_thread::sleep_for(400ms);
  EXPECT_FALSE(fired);
  EXPECT_FALSE(watchdog.Disarm(id));  // unknown now: harmless
}

TEST(WatchdogTest, EachDeadlineIsIndependent) {
  Watchdog watchdog;
  std::atomic<bool> early{false}, kept{false}, dropped{false};
  const uint64_t a = watchdog.Arm(Steady::now() + 50ms, [&] { early = true; });
  const uint64_t b = watchdog.Arm(Steady::now() + 10min, [&] { kept = true; });
  const uint64_t c = watchdog.Arm(Steady::now() + 150ms, [&] { dropped = true; });
  EXPECT_FALSE(watchdog.Disarm(c));
  ASSERT_TRUE(WaitFor(early, 5s));
  std::this_thread::sleep_for(300ms);
  EXPECT_FALSE(kept);
  EXPECT_FALSE(dropped);
  EXPECT_TRUE(watchdog.Disarm(a));
  EXPECT_FALSE(watchdog.Disarm(b));
  EXPECT_FALSE(kept);
}

TEST(WatchdogTest, DisarmWaitsForARunningAbortToFinish) {
  Watchdog watchdog;
  std::atomic<bool> started{false}, finished{false};
  const uint64_t id = watchdog.Arm(Steady::now(), [&] {
    started = true;
    std::this_thread::sleep_for(200ms);
    finished = true;
  });
  ASSERT_TRUE(WaitFor(started, 5s));
  EXPECT_TRUE(watchdog.Disarm(id));
  EXPECT_TRUE(finished) << "Disarm returned while the abort was still running";
}

TEST(WatchdogTest, DestroyingAnArmedWatchdogRunsNothing) {
  std::atomic<bool> fired{false};
  {
    Watchdog watchdog;
    watchdog.Arm(Steady::now() + 200ms, [&] { fired = true; });
  }
  std::this_thread::sleep_for(300ms);
  EXPECT_FALSE(fired);
}

}  // namespace
}  // namespace webhookd
