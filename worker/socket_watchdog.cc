#include "worker/socket_watchdog.h"

#include <sys/socket.h>

namespace webhookd {

SocketWatchdog::SocketWatchdog(std::chrono::milliseconds tick)
    : tick_(tick), thread_([this] { Watch(); }) {}

SocketWatchdog::~SocketWatchdog() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

// No wake-up for the thread: arming is on every read of a broker's answers, and a tick's
// lateness is nothing beside a deadline of seconds.
void SocketWatchdog::Arm(int fd, std::chrono::steady_clock::time_point deadline) {
  std::lock_guard lock(mu_);
  fd_ = fd;
  deadline_ = deadline;
  fired_ = false;
}

void SocketWatchdog::Disarm() {
  std::lock_guard lock(mu_);
  fd_ = -1;
}

bool SocketWatchdog::Fired() {
  std::lock_guard lock(mu_);
  return fired_;
}

void SocketWatchdog::Watch() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    if (fd_ >= 0 && !fired_ && std::chrono::steady_clock::now() >= deadline_) {
      // Both ways: a read then sees the end, and a write fails.
      ::shutdown(fd_, SHUT_RDWR);
      fired_ = true;
    }
    cv_.wait_for(lock, tick_);
  }
}

}  // namespace webhookd
