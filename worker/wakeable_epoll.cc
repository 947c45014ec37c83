#include "worker/wakeable_epoll.h"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include "base/log.h"

namespace webhookd {
namespace {

[[noreturn]] void Fail(const char* what) {
  const std::string error = std::strerror(errno);
  Log(LogLevel::kError, "system call failed", {{"call", what}, {"error", error}});
  std::abort();
}

}  // namespace

WakeableEpoll::WakeableEpoll() {
  epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
  if (epoll_fd_ < 0) Fail("epoll_create1");
  wake_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd_ < 0) Fail("eventfd");
  epoll_event event{};
  event.events = EPOLLIN;
  event.data.fd = wake_fd_;
  if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, wake_fd_, &event) != 0) Fail("epoll_ctl");
}

WakeableEpoll::~WakeableEpoll() {
  close(wake_fd_);
  close(epoll_fd_);
}

bool WakeableEpoll::Watch(int fd, uint32_t events, bool watched) {
  epoll_event event{};
  event.events = events;
  event.data.fd = fd;
  if (epoll_ctl(epoll_fd_, watched ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, fd, &event) == 0) return true;
  // The kernel drops a descriptor from the set when it is closed: a number watched before
  // may now be a new socket, and one thought new may still be registered.
  if (errno != (watched ? ENOENT : EEXIST)) return false;
  return epoll_ctl(epoll_fd_, watched ? EPOLL_CTL_ADD : EPOLL_CTL_MOD, fd, &event) == 0;
}

void WakeableEpoll::Forget(int fd) {
  // ENOENT or EBADF when it was closed first: nothing is left to forget either way.
  epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
}

void WakeableEpoll::Wake() {
  const uint64_t one = 1;
  // EAGAIN would mean the counter is full, so the descriptor is readable already.
  while (write(wake_fd_, &one, sizeof one) < 0 && errno == EINTR) {
  }
}

void WakeableEpoll::Wait(int timeout_ms,
                         const std::function<void(int fd, uint32_t events)>& ready) {
  std::array<epoll_event, 256> events;
  const int n = epoll_wait(epoll_fd_, events.data(), static_cast<int>(events.size()), timeout_ms);
  for (int i = 0; i < n; ++i) {
    const int fd = events[static_cast<size_t>(i)].data.fd;
    if (fd == wake_fd_) {
      uint64_t count;
      while (read(wake_fd_, &count, sizeof count) < 0 && errno == EINTR) {
      }
      continue;
    }
    ready(fd, events[static_cast<size_t>(i)].events);
  }
}

}  // namespace webhookd
