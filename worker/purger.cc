#include "worker/purger.h"

#include <chrono>

#include "base/log.h"

namespace webhookd {

Purger::Purger(RetentionStore& store, Options options, Metrics* metrics, ErasureStore* erasures)
    : store_(store), options_(options), metrics_(metrics), erasures_(erasures) {}

Purger::~Purger() { Stop(); }

void Purger::Start() {
  thread_ = std::thread([this] { Loop(); });
}

void Purger::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Purger::Wake() {
  {
    std::lock_guard lock(mu_);
    woken_ = true;
  }
  cv_.notify_all();
}

ErasureRound Purger::EraseOnce() {
  if (erasures_ == nullptr) return {};
  auto round = erasures_->RunErasures(options_.batch, kErasureBatches);
  if (!round) {
    Log(LogLevel::kWarn, "erasing failed; trying again later", {{"error", round.error().message}});
    return {};
  }
  if (round->finished > 0) Log(LogLevel::kInfo, "erased subjects", {{"count", round->finished}});
  return *round;
}

int Purger::DropDaysOnce() {
  auto added = store_.AddHistoryDays(options_.days_ahead);
  if (!added) {
    Log(LogLevel::kWarn, "adding days of the history failed; trying again later",
        {{"error", added.error().message}});
  } else if (*added > 0) {
    Log(LogLevel::kInfo, "added days of the history", {{"count", *added}});
  }
  // Retention zero keeps everything, but a drop already begun is finished.
  Clock& clock = options_.clock != nullptr ? *options_.clock : system_clock_;
  const Timestamp cutoff = options_.retention > Duration::zero()
                               ? clock.Now() - options_.retention
                               : Timestamp{};  // 1970: no day ended before it
  const auto started = std::chrono::steady_clock::now();
  auto dropped = store_.DropAgedDays(cutoff, options_.max_days);
  if (!dropped) {
    Log(LogLevel::kWarn, "dropping aged days of the history failed; trying again later",
        {{"error", dropped.error().message}});
    return 0;
  }
  if (dropped->days > 0) {
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                        std::chrono::steady_clock::now() - started)
                        .count();
    Log(LogLevel::kInfo, "dropped aged days of the history",
        {{"days", dropped->days},
         {"kept_events", dropped->kept_events},
         {"ms", static_cast<int64_t>(ms)}});
  }
  return dropped->days;
}

int64_t Purger::PurgeOnce() {
  int64_t total = 0;
  // Bounded, so a huge backlog is worked off over several rounds, not in one.
  for (int round = 0; round < 100; ++round) {
    auto purged = store_.PurgeExpired(options_.retention, options_.batch);
    if (!purged) {
      Log(LogLevel::kWarn, "purging failed; trying again later",
          {{"error", purged.error().message}});
      break;
    }
    total += *purged;
    if (metrics_ != nullptr) metrics_->purged_events.Inc(static_cast<uint64_t>(*purged));
    if (*purged < options_.batch) break;
  }
  if (total > 0) Log(LogLevel::kInfo, "purged expired events", {{"count", total}});
  return total;
}

void Purger::Loop() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    woken_ = false;
    lock.unlock();
    const ErasureRound erased = EraseOnce();
    const bool erasing = erased.running > 0 && !erased.held_back;
    DropDaysOnce();
    PurgeOnce();
    lock.lock();
    if (erasing) woken_ = true;
    cv_.wait_for(lock, options_.every, [&] { return stopping_ || woken_; });
  }
}

}  // namespace webhookd
