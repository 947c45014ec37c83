#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <thread>

namespace webhookd {

// Runs an abort action for work that outlives its deadline. cpp-httplib bounds each read,
// not a whole exchange, so a receiver trickling a byte a second is cut off here.
class Watchdog {
 public:
  using SteadyTime = std::chrono::steady_clock::time_point;

  Watchdog();
  ~Watchdog();

  // Calls `abort` (on the watchdog's thread) if Disarm(id) has not happened by `deadline`.
  uint64_t Arm(SteadyTime deadline, std::function<void()> abort);
  // True when the abort ran. After Disarm returns, the abort is not running and never will.
  bool Disarm(uint64_t id);

 private:
  struct Entry {
    SteadyTime deadline;
    std::function<void()> abort;
    bool fired = false;
  };
  void Loop();

  std::mutex mu_;
  std::condition_variable cv_;
  std::map<uint64_t, Entry> entries_;
  uint64_t next_id_ = 1;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace webhookd
