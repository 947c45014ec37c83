#pragma once

#include <algorithm>
#include <chrono>

namespace webhookd::pg {

// When a pool may try to connect again after a failed attempt. While the database is
// down (or, with several hosts, while no host is primary yet), every caller would
// otherwise run libpq's whole connection attempt, host after host, and a server under
// load would spend its threads and the standby's accept queue on it. After a failure
// the next attempt waits `first`, doubling up to `max`; a success starts over. Callers
// that come while waiting fail at once (a 503 for ingest, a backoff for a worker).
// Time is passed in, so the schedule is tested exactly. Not thread-safe: the pool
// guards it.
class ReconnectBackoff {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;
  using Duration = std::chrono::steady_clock::duration;

  ReconnectBackoff(Duration first, Duration max) : first_(first), max_(max) {}

  bool MayTry(TimePoint now) const { return now >= next_try_; }

  void Failed(TimePoint now) {
    delay_ = delay_ == Duration::zero() ? first_ : std::min(max_, delay_ * 2);
    next_try_ = now + delay_;
  }

  void Succeeded() {
    delay_ = Duration::zero();
    next_try_ = TimePoint::min();
  }

  Duration delay() const { return delay_; }

 private:
  Duration first_;
  Duration max_;
  Duration delay_ = Duration::zero();
  TimePoint next_try_ = TimePoint::min();
};

}  // namespace webhookd::pg
