#include "core/concurrency_limit.h"

#include <algorithm>

namespace webhookd {

ConcurrencyLimit::ConcurrencyLimit(int max) : max_(std::max(1, max)), effective_(max_) {}

ConcurrencyLimit::ConcurrencyLimit(int max, int effective, int success_run, bool ramping)
    : max_(std::max(1, max)),
      effective_(std::clamp(effective, 1, max_)),
      success_run_(std::max(0, success_run)),
      ramping_(ramping && effective_ < max_) {}

void ConcurrencyLimit::OnThrottle() {
  effective_ = std::max(1, effective_ / 2);
  success_run_ = 0;
  ramping_ = false;
}

void ConcurrencyLimit::OnSuccess() {
  if (effective_ >= max_) {
    success_run_ = 0;
    ramping_ = false;
    return;
  }
  if (ramping_) {
    effective_ = std::min(max_, effective_ * 2);
    ramping_ = effective_ < max_;
    return;
  }
  if (++success_run_ >= effective_) {
    ++effective_;
    success_run_ = 0;
  }
}

void ConcurrencyLimit::Restart() {
  effective_ = 1;
  success_run_ = 0;
  ramping_ = effective_ < max_;
}

}  // namespace webhookd
