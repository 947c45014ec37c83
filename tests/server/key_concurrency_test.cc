// At most `limit` requests of one key in progress; other keys are not counted against
// it, and an ended request frees its slot.
#include "server/key_concurrency.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace webhookd::key_concurrency_test {
namespace {

TEST(KeyConcurrencyTest, ALimitOfTwoRefusesTheThirdUntilOneEnds) {
  KeyConcurrency limiter(2);
  auto first = limiter.TryAcquire("key-a");
  auto second = limiter.TryAcquire("key-a");
  ASSERT_TRUE(first.has_value());
  ASSERT_TRUE(second.has_value());
  EXPECT_FALSE(limiter.TryAcquire("key-a").has_value());
  EXPECT_EQ(limiter.InProgress("key-a"), 2);
  // Another key has slots of its own.
  auto other = limiter.TryAcquire("key-b");
  EXPECT_TRUE(other.has_value());
  first.reset();
  EXPECT_EQ(limiter.InProgress("key-a"), 1);
  EXPECT_TRUE(limiter.TryAcquire("key-a").has_value());  // acquired and released at once
  EXPECT_EQ(limiter.InProgress("key-a"), 1);
  second.reset();
  other.reset();
  EXPECT_EQ(limiter.InProgress("key-a"), 0);
  EXPECT_EQ(limiter.InProgress("key-b"), 0);
}

TEST(KeyConcurrencyTest, AMovedSlotIsReleasedOnce) {
  KeyConcurrency limiter(1);
  {
    auto slot = limiter.TryAcquire("k");
    ASSERT_TRUE(slot.has_value());
    KeyConcurrency::Slot moved = std::move(*slot);
    slot.reset();  // the moved-from slot releases nothing
    EXPECT_EQ(limiter.InProgress("k"), 1);
    EXPECT_FALSE(limiter.TryAcquire("k").has_value());
  }
  EXPECT_EQ(limiter.InProgress("k"), 0);
}

// Eight threads that all hold a slot until every thread has tried: exactly `limit` of
// them get one, whatever the interleaving.
TEST(KeyConcurrencyTest, ThreadsTryingAtOnceGetExactlyTheLimit) {
  KeyConcurrency limiter(2);
  constexpr int kThreads = 8;
  std::atomic<int> tried{0};
  std::atomic<int> got{0};
  std::atomic<bool> release{false};
  // Every wait is bounded: a broken limiter fails the test rather than hanging it.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&] {
      auto slot = limiter.TryAcquire("shared");
      if (slot) ++got;
      ++tried;
      while (!release.load() && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::yield();
      }
    });
  }
  while (tried.load() < kThreads && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::yield();
  }
  ASSERT_EQ(tried.load(), kThreads);
  EXPECT_EQ(got.load(), 2);
  EXPECT_EQ(limiter.InProgress("shared"), 2);
  release = true;
  for (auto& t : threads) t.join();
  EXPECT_EQ(limiter.InProgress("shared"), 0);
}

}  // namespace
}  // namespace webhookd::key_concurrency_test
