#pragma once

#include <cstdint>
#include <functional>

namespace webhookd {

// An epoll instance with an eventfd of its own registered in it: one thread waits on the
// descriptors it watches (level-triggered), and any thread can end that wait by Wake.
// The eventfd counts, so a Wake that comes before the Wait is not lost.
class WakeableEpoll {
 public:
  // Aborts when the kernel gives neither (descriptors exhausted at start-up).
  WakeableEpoll();
  ~WakeableEpoll();
  WakeableEpoll(const WakeableEpoll&) = delete;
  WakeableEpoll& operator=(const WakeableEpoll&) = delete;

  // Watches `fd` for `events` (EPOLLIN, EPOLLOUT), or changes what it is watched for.
  // `watched` says which of the two is expected, which saves a system call; a descriptor
  // closed and reused behind the caller's back is still handled. False, with errno set,
  // when the kernel refuses.
  bool Watch(int fd, uint32_t events, bool watched);
  void Forget(int fd);

  // Thread-safe.
  void Wake();

  // Waits at most `timeout_ms` (-1: no limit) and calls `ready` with every watched
  // descriptor that is ready and its epoll events. A Wake ends the wait, and is consumed.
  void Wait(int timeout_ms, const std::function<void(int fd, uint32_t events)>& ready);

 private:
  int epoll_fd_;
  int wake_fd_;
};

}  // namespace webhookd
