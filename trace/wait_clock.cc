#include "trace/wait_clock.h"

namespace webhookd::trace {
namespace {

class Steady final : public WaitClock {
 public:
  TimePoint Now() override { return std::chrono::steady_clock::now(); }
  void WaitUntil(std::condition_variable& cv, std::unique_lock<std::mutex>& lock,
                 TimePoint deadline) override {
    if (deadline == TimePoint::max()) {
      cv.wait(lock);  // wait_until would overflow converting max() to the system clock
    } else {
      cv.wait_until(lock, deadline);
    }
  }
};

}  // namespace

WaitClock& SteadyWaitClock() {
  static Steady clock;
  return clock;
}

}  // namespace webhookd::trace
