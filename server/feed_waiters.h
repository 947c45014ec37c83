#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <thread>
#include <vector>

#include "base/result.h"
#include "store/delivery_queue.h"

namespace webhookd {

// The long polls of feed reads (docs/feeds.md): a read that found nothing waits here as a
// callback, holding no thread and no database connection, until a wake-up on the channel
// that wakes the workers' claim (a message may have arrived), the end of its wait, or Stop.
//
// The channel says that something was queued, not for whom: every ingest commit wakes it.
// So a wake-up asks the database once which of the waiting reads' feeds have a message
// to lease (the probe), and answers only those reads; the others keep waiting. A thousand
// waiting reads then cost one query per wake-up, not a thousand leases, whoever holds
// them. Without a probe, or when it fails, every waiter is answered (the safe way).
//
// Threads: one holds a connection that LISTENs on the wake-up channel (made again, with a
// backoff, when it is lost); one answers the waiters: at the end of each one's wait, after
// a wake-up, at Stop. Callbacks run on that second thread and must not block. Whatever
// the number of waiters, these two threads and the one connection are all they cost.
class FeedWaiters {
 public:
  enum class Woken { kArrived, kTimedOut, kStopped };
  using Callback = std::function<void(Woken)>;
  using Clock = std::chrono::steady_clock;
  // Opens the wake-up listener (PgDeliveryQueue::Listen).
  using Listen = std::function<Result<std::unique_ptr<WakeupListener>>()>;
  // Which of these feeds have a message a read could lease now (FeedStore::ReadyFeeds); a
  // feed it names that has none only costs its reads one lease each.
  using Probe = std::function<Result<std::vector<int64_t>>(std::span<const int64_t>)>;

  // Reads waiting at once in one process: past it, a read is answered at once with what
  // there is (an empty list), so waiting reads cannot pile up without bound.
  static constexpr int kDefaultMaxWaiters = 1000;

  // `listen` may be empty: then only Notify and Wake wake (tests). `probe` may be empty:
  // then a wake-up answers every waiter.
  explicit FeedWaiters(Listen listen, Probe probe = {}, int max_waiters = kDefaultMaxWaiters);
  ~FeedWaiters();  // Stop
  FeedWaiters(const FeedWaiters&) = delete;
  FeedWaiters& operator=(const FeedWaiters&) = delete;

  // Starts the two threads.
  void Start();
  // Wake-ups so far. A read takes it before it leases and waits with it, so a message
  // that arrives between its lease and its wait wakes it at once.
  uint64_t Generation() const;
  // Keeps `done`, a read of `feed`, until a wake-up for it (kArrived; any wake-up since
  // `seen` answers at once), `until` (kTimedOut) or Stop (kStopped); false, and `done`
  // dropped uncalled, when stopped or max_waiters wait.
  bool Wait(int64_t feed, uint64_t seen, Clock::time_point until, Callback done);
  // A wake-up for everyone: every waiter is answered kArrived.
  void Notify();
  // A wake-up from the channel: the probe names the feeds with a message, and their
  // waiters alone are answered kArrived (all of them without a probe, or when it fails).
  // Blocks for the probe's query; the listener thread calls it.
  void Wake();
  // Answers every waiter kStopped and refuses new ones; returns once they are answered
  // and both threads ended, so nothing calls back after it (but from a callback, which
  // must not wait for its own thread). Thread-safe, idempotent.
  void Stop();
  int Waiting() const;

 private:
  struct Waiter {
    int64_t feed;
    bool arrived;
    Callback done;
  };
  // Marks the waiters of `feeds` (every waiter when nullopt) arrived.
  void MarkArrived(const std::optional<std::vector<int64_t>>& feeds);
  void AnswerLoop();
  void ListenLoop();

  Listen listen_;
  Probe probe_;
  const int max_waiters_;
  mutable std::mutex mu_;  // guards the four below
  std::condition_variable cv_;
  std::multimap<Clock::time_point, Waiter> waiters_;  // by the end of their wait
  uint64_t generation_ = 0;
  bool stopping_ = false;
  std::mutex join_mu_;  // one Stop joins the threads at a time
  std::thread answerer_;
  std::thread listener_;
};

}  // namespace webhookd
