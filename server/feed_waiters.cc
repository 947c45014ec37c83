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

FeedWaiters::FeedWaiters(Listen listen, Probe probe, int max_waiters)
    : listen_(std::move(listen)), probe_(std::move(probe)), max_waiters_(max_waiters) {}

FeedWaiters::~FeedWaiters() { Stop(); }

void FeedWaiters::Start() {
  answerer_ = std::thread([this] { AnswerLoop(); });
  if (listen_) listener_ = std::thread([this] { ListenLoop(); });
}

uint64_t FeedWaiters::Generation() const {
  std::lock_guard lock(mu_);
  return generation_;
}

bool FeedWaiters::Wait(int64_t feed, uint64_t seen, Clock::time_point until, Callback done) {
  {
    std::lock_guard lock(mu_);
    if (stopping_ || std::cmp_greater_equal(waiters_.size(), max_waiters_)) return false;
    // A wake-up since `seen` came while the read leased, and maybe before a probe could
    // see this waiter: it leases again.
    waiters_.emplace(until, Waiter{feed, seen < generation_, std::move(done)});
  }
  cv_.notify_all();
  return true;
}

void FeedWaiters::MarkArrived(const std::optional<std::vector<int64_t>>& feeds) {
  // Up to max_waiters_ waiters against as many feeds: looked up, not scanned.
  std::optional<std::vector<int64_t>> sorted = feeds;
  if (sorted) std::sort(sorted->begin(), sorted->end());
  {
    std::lock_guard lock(mu_);
    for (auto& [until, w] : waiters_) {
      if (!sorted || std::binary_search(sorted->begin(), sorted->end(), w.feed)) {
        w.arrived = true;
      }
    }
  }
  cv_.notify_all();
}

void FeedWaiters::Notify() {
  {
    std::lock_guard lock(mu_);
    ++generation_;
  }
  MarkArrived(std::nullopt);
}

void FeedWaiters::Wake() {
  if (!probe_) return Notify();
  // The generation moves first: a read between its lease and its Wait (so not among the
  // feeds probed) finds it moved and leases again.
  std::vector<int64_t> feeds;
  {
    std::lock_guard lock(mu_);
    ++generation_;
    for (const auto& [until, w] : waiters_) {
      if (!w.arrived) feeds.push_back(w.feed);
    }
  }
  std::sort(feeds.begin(), feeds.end());
  feeds.erase(std::unique(feeds.begin(), feeds.end()), feeds.end());
  if (feeds.empty()) return;
  Result<std::vector<int64_t>> ready = probe_(feeds);
  if (!ready) {
    Log(LogLevel::kWarn,
        "feed reads cannot tell which feeds have messages; every waiting read "
        "leases again",
        {{"error", ready.error().message}});
    return MarkArrived(std::nullopt);
  }
  if (!ready->empty()) MarkArrived(*ready);
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
      } else if (it->second.arrived) {
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
    if (!*got) continue;
    // Every wake-up already here is answered by one probe: those that came before it are
    // committed, so it sees their messages.
    while (true) {
      auto more = listener->Wait(Duration::zero());
      if (!more) {
        listener.reset();
        break;
      }
      if (!*more) break;
    }
    Wake();
  }
}

}  // namespace webhookd
