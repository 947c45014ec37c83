#pragma once

#include <cstddef>
#include <mutex>
#include <stdexcept>
#include <utility>
#include <vector>

#include "base/clock.h"
#include "base/random.h"

namespace webhookd::testing {

// A clock that moves only when told to.
class FakeClock final : public Clock {
 public:
  explicit FakeClock(Timestamp start = Timestamp(std::chrono::seconds(1'700'000'000)))
      : now_(start) {}
  Timestamp Now() override {
    std::lock_guard lock(mu_);
    return now_;
  }
  void Advance(Duration d) {
    std::lock_guard lock(mu_);
    now_ += d;
  }
  void Set(Timestamp t) {
    std::lock_guard lock(mu_);
    now_ = t;
  }

 private:
  std::mutex mu_;
  Timestamp now_;
};

// Returns the scripted values in order, then repeats the last one.
class FakeRandom final : public Random {
 public:
  explicit FakeRandom(std::vector<double> values) : values_(std::move(values)) {
    if (values_.empty()) throw std::invalid_argument("FakeRandom needs a value");
  }
  double Unit() override {
    std::lock_guard lock(mu_);
    const double v = values_[std::min(next_, values_.size() - 1)];
    ++next_;
    return v;
  }
  size_t draws() const { return next_; }

 private:
  std::mutex mu_;
  std::vector<double> values_;
  size_t next_ = 0;
};

}  // namespace webhookd::testing
