#pragma once

#include <thread>

#include "base/clock.h"

namespace webhookd::client {

// Waiting, injected so that tests of retry waits take no time.
class Sleeper {
 public:
  virtual ~Sleeper() = default;
  virtual void Sleep(Duration d) = 0;
};

class RealSleeper final : public Sleeper {
 public:
  void Sleep(Duration d) override { std::this_thread::sleep_for(d); }
};

}  // namespace webhookd::client
