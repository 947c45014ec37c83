#include "worker/watchdog.h"

namespace webhookd {

Watchdog::Watchdog() : thread_([this] { Loop(); }) {}

Watchdog::~Watchdog() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

uint64_t Watchdog::Arm(SteadyTime deadline, std::function<void()> abort) {
  std::lock_guard lock(mu_);
  const uint64_t id = next_id_++;
  entries_.emplace(id, Entry{deadline, std::move(abort), false});
  return id;
}

bool Watchdog::Disarm(uint64_t id) {
  std::lock_guard lock(mu_);
  auto it = entries_.find(id);
  if (it == entries_.end()) return false;
  const bool fired = it->second.fired;
  entries_.erase(it);
  return fired;
}

void Watchdog::Loop() {
  std::unique_lock lock(mu_);
  while (!stop_) {
    const auto now = std::chrono::steady_clock::now();
    for (auto& [id, entry] : entries_) {
      if (!entry.fired && entry.deadline <= now) {
        entry.fired = true;
        // Under the lock, so the owner cannot disarm and free what `abort` touches.
        entry.abort();
      }
    }
    cv_.wait_for(lock, std::chrono::milliseconds(20));
  }
}

}  // namespace webhookd
