#include "server/feed_waiters.h"

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "base/log.h"

namespace webhookd {

namespace {

constexpr std::chrono::milliseconds kListenSlice{250};  // how soon the listener sees Stop
constexpr std::chrono::milliseconds kFirstBackoff{100};
constexpr std::chrono::milliseconds kMaxBackoff{5000};

}  // namespace

FeedWaiters::FeedWaiters(Listen listen, int max_waiters)
    : listen_(std::move(listen)), max_waiters_(max_waiters) {}

FeedWaiters::~FeedWaiters() { Stop(); }

void FeedWaiters::Start() {
  answerer_ = std::thread([this] { AnswerLoop(); });
  if (listen_) listener_ = std::thread([this] { ListenLoop(); });
}

uint64_t FeedWaiters::Generation() const {
  std::lock_guard lock(mu_);
  return generation_;
}

bool FeedWaiters::Wait(uint64_t seen, Clock::time_point until, Callback done) {
  {
    std::lock_guard lock(mu_);
    if (stopping_ || std::cmp_greater_equal(waiters_.size(), max_waiters_)) return false;
    waiters_.emplace(until, Waiter{seen, std::move(done)});
  }
  cv_.notify_all();
  return true;
}

void FeedWaiters::Notify() {
  {
    std::lock_guard lock(mu_);
    ++generation_;
  }
  cv_.notify_all();
}

void FeedWaiters::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  std::lock_guard join(join_mu_);
  const auto self = std::this_thread::get_id();
  if (listener_.joinable() && listener_.get_id() != self) listener_.join();
  if (answerer_.joinable()) {
    // The answerer answers every waiter kStopped, then ends.
    if (answerer_.get_id() != self) answerer_.join();
    return;
  }
  // Never started, or already joined: nobody else answers what is left.
  std::multimap<Clock::time_point, Waiter> left;
  {
    std::lock_guard lock(mu_);
    left.swap(waiters_);
  }
  for (auto& [until, w] : left) w.done(Woken::kStopped);
}

int FeedWaiters::Waiting() const {
  std::lock_guard lock(mu_);
  return static_cast<int>(waiters_.size());
}

void FeedWaiters::AnswerLoop() {
  std::unique_lock lock(mu_);
  while (true) {
    std::vector<std::pair<Callback, Woken>> due;
    const auto now = Clock::now();
    for (auto it = waiters_.begin(); it != waiters_.end();) {
      std::optional<Woken> why;
      if (stopping_) {
        why = Woken::kStopped;
      } else if (it->second.seen < generation_) {
        why = Woken::kArrived;
      } else if (it->first <= now) {
        why = Woken::kTimedOut;
      }
      if (!why) {
        ++it;
        continue;
      }
      due.emplace_back(std::move(it->second.done), *why);
      it = waiters_.erase(it);
    }
    if (due.empty() && !stopping_) {
      // Until the earliest end of a wait, or a change (a new waiter, a wake-up, Stop).
      if (waiters_.empty()) {
        cv_.wait(lock);
      } else {
        cv_.wait_until(lock, waiters_.begin()->first);
      }
      continue;
    }
    const bool stop = stopping_;
    // Answered outside the lock: a callback may lead to another Wait.
    lock.unlock();
    for (auto& [done, why] : due) done(why);
    if (stop) return;
    lock.lock();
  }
}

void FeedWaiters::ListenLoop() {
  std::unique_ptr<WakeupListener> listener;
  std::chrono::milliseconds delay = kFirstBackoff;
  const auto stopping = [this] {
    std::lock_guard lock(mu_);
    return stopping_;
  };
  while (!stopping()) {
    if (!listener) {
      auto made = listen_();
      if (!made) {
        Log(LogLevel::kWarn, "feed reads cannot listen for wake-ups",
            {{"error", made.error().message}});
        std::unique_lock lock(mu_);
        cv_.wait_for(lock, delay, [this] { return stopping_; });
        delay = std::min(kMaxBackoff, delay * 2);
        continue;
      }
      listener = std::move(*made);
      delay = kFirstBackoff;
      Notify();  // whatever arrived while nobody listened
    }
    auto got = listener->Wait(kListenSlice);
    if (!got) {
      listener.reset();
      continue;
    }
    if (*got) Notify();
  }
}

}  // namespace webhookd
