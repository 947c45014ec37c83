#include "worker/recoverer.h"

#include "base/log.h"

namespace webhookd {

Recoverer::Recoverer(RecoveryStore& store, Options options, Metrics* metrics)
    : store_(store), options_(options), metrics_(metrics) {}

Recoverer::~Recoverer() { Stop(); }

void Recoverer::Start() {
  thread_ = std::thread([this] { Loop(); });
}

void Recoverer::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Recoverer::Wake() {
  {
    std::lock_guard lock(mu_);
    woken_ = true;
  }
  cv_.notify_all();
}

RecoveryRound Recoverer::RecoverOnce() {
  auto round = store_.RunRecoveries(options_.pace, kPages);
  if (!round) {
    Log(LogLevel::kWarn, "recovering dead letters failed; trying again later",
        {{"error", round.error().message}});
    return {};
  }
  if (metrics_ != nullptr && round->replayed > 0) {
    metrics_->replays.Inc(static_cast<uint64_t>(round->replayed));
  }
  if (round->finished > 0) Log(LogLevel::kInfo, "recoveries done", {{"count", round->finished}});
  return *round;
}

void Recoverer::Loop() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    woken_ = false;
    lock.unlock();
    const RecoveryRound round = RecoverOnce();
    lock.lock();
    // Pages that could go at once go at once; a queue that is full waits a round.
    if (round.more) woken_ = true;
    cv_.wait_for(lock, options_.every, [&] { return stopping_ || woken_; });
  }
}

}  // namespace webhookd
