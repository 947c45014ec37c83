#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace webhookd {

// Ends a call into a broker library that overruns its deadline, by shutting its socket
// down. librabbitmq reads heartbeat frames for as long as a broker sends them and waits
// on a full send buffer without a deadline of its own, so a broker could otherwise hold
// the connection's thread, and every message on it, for as long as it liked.
//
// Threads: one, made by the constructor and joined by the destructor. It looks at the
// armed deadline every `tick`, and touches the socket only while the owner is between
// Arm and Disarm (under mu_), that is inside the guarded call, which keeps the socket
// open: it is never a socket closed and reused meanwhile.
class SocketWatchdog {
 public:
  explicit SocketWatchdog(std::chrono::milliseconds tick = std::chrono::milliseconds(100));
  ~SocketWatchdog();
  SocketWatchdog(const SocketWatchdog&) = delete;
  SocketWatchdog& operator=(const SocketWatchdog&) = delete;

  // From now until Disarm, `fd` is shut down once `deadline` has passed.
  void Arm(int fd, std::chrono::steady_clock::time_point deadline);
  void Disarm();
  // Whether the socket was shut down since the last Arm.
  bool Fired();

  // Armed for a scope: the guarded call is the scope.
  class Armed {
   public:
    Armed(SocketWatchdog& watchdog, int fd, std::chrono::steady_clock::time_point deadline)
        : watchdog_(watchdog) {
      watchdog_.Arm(fd, deadline);
    }
    ~Armed() { watchdog_.Disarm(); }
    Armed(const Armed&) = delete;
    Armed& operator=(const Armed&) = delete;

   private:
    SocketWatchdog& watchdog_;
  };

 private:
  void Watch();

  const std::chrono::milliseconds tick_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;                           // guarded by mu_
  int fd_ = -1;                                     // guarded by mu_; -1 when disarmed
  std::chrono::steady_clock::time_point deadline_;  // guarded by mu_
  bool fired_ = false;                              // guarded by mu_
  std::thread thread_;
};

}  // namespace webhookd
