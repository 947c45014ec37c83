#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "base/result.h"
#include "store/delivery_queue.h"

namespace webhookd {

// The long polls of feed reads (docs/feeds.md): a read that found nothing waits here as a
// callback, holding no thread and no database connection, until a wake-up on the channel
// that wakes the workers' claim (a message may have arrived), the end of its wait, or Stop.
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

  // Reads waiting at once in one process: past it, a read is answered at once with what
  // there is (an empty list), so waiting reads cannot pile up without bound.
  static constexpr int kDefaultMaxWaiters = 1000;

  // `listen` may be empty: then only Notify wakes (tests).
  explicit FeedWaiters(Listen listen, int max_waiters = kDefaultMaxWaiters);
  ~FeedWaiters();  // Stop
  FeedWaiters(const FeedWaiters&) = delete;
  FeedWaiters& operator=(const FeedWaiters&) = delete;

  // Starts the two threads.
  void Start();
  // Wake-ups so far. A read takes it before it leases and waits with it, so a message
  // that arrives between its lease and its wait wakes it at once.
  uint64_t Generation() const;
  // Keeps `done` until a wake-up after `seen` (kArrived), `until` (kTimedOut) or Stop
  // (kStopped); false, and `done` dropped uncalled, when stopped or max_waiters wait.
  bool Wait(uint64_t seen, Clock::time_point until, Callback done);
  // A wake-up: every waiter is answered kArrived.
  void Notify();
  // Answers every waiter kStopped and refuses new ones; returns once they are answered
  // and both threads ended, so nothing calls back after it (but from a callback, which
  // must not wait for its own thread). Thread-safe, idempotent.
  void Stop();
  int Waiting() const;

 private:
  struct Waiter {
    uint64_t seen;
    Callback done;
  };
  void AnswerLoop();
  void ListenLoop();

  Listen listen_;
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
