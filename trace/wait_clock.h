#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>

namespace webhookd::trace {

// The exporter's time: what time it is and how its thread waits for a moment. A test
// gives one that moves only when told, so the schedule delay and the retries' backoff
// are checked without sleeping.
class WaitClock {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;
  virtual ~WaitClock() = default;
  virtual TimePoint Now() = 0;
  // As cv.wait_until(lock, deadline): returns once notified, at `deadline` or
  // spuriously; the caller checks again what it waits for.
  virtual void WaitUntil(std::condition_variable& cv, std::unique_lock<std::mutex>& lock,
                         TimePoint deadline) = 0;
};

// std::chrono::steady_clock: the one every exporter uses outside tests.
WaitClock& SteadyWaitClock();

}  // namespace webhookd::trace
