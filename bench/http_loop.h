// An epoll HTTP/1.1 server loop for bench_sink. A request that is answered late waits as
// an entry in a timer heap, not as a sleeping thread, so thousands of them in flight cost
// memory and no CPU: the receiver must not take the cores from the service it measures.
#ifndef WEBHOOKD_BENCH_HTTP_LOOP_H_
#define WEBHOOKD_BENCH_HTTP_LOOP_H_

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <queue>
#include <string>
#include <vector>

#include "bench/http_request.h"

namespace webhookd::bench {

inline int64_t SteadyNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

struct Response {
  int status = 200;
  std::string body;
};

// Called on the loop's thread; with several loops, from several threads at once.
class Handler {
 public:
  virtual ~Handler() = default;
  // How long to hold `request` before Answer(); 0 answers at once.
  virtual int64_t WaitNs(const Request& request) = 0;
  virtual Response Answer(const Request& request) = 0;
};

// A non-blocking socket listening on 127.0.0.1:`port` (0 picks a free one), or -1.
// Sets `bound` to the port.
inline int ListenOnLoopback(int port, int backlog, int& bound) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  const int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || listen(fd, backlog) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    close(fd);
    return -1;
  }
  bound = ntohs(addr.sin_port);
  return fd;
}

class HttpLoop {
 public:
  // Several loops may share `listen_fd`: each is woken alone for a new connection.
  HttpLoop(int listen_fd, Handler& handler)
      : listen_fd_(listen_fd), handler_(handler), epoll_fd_(epoll_create1(EPOLL_CLOEXEC)) {
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLEXCLUSIVE;
    ev.data.fd = listen_fd_;
    if (epoll_fd_ < 0 || epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, listen_fd_, &ev) != 0) {
      std::perror("epoll");
      std::exit(1);
    }
    // Held so that running out of descriptors can still refuse a connection: a pending
    // one that is never accepted would wake the loop again and again.
    spare_fd_ = open("/dev/null", O_RDONLY | O_CLOEXEC);
  }

  [[noreturn]] void Run() {
    std::vector<epoll_event> events(256);
    for (;;) {
      const int n = epoll_wait(epoll_fd_, events.data(), static_cast<int>(events.size()),
                               TimeoutMs(SteadyNs()));
      if (n < 0 && errno != EINTR) {
        std::perror("epoll_wait");
        std::exit(1);
      }
      for (int i = 0; i < n; ++i) {
        if (events[i].data.fd == listen_fd_) {
          Accept();
        } else {
          OnEvent(events[i].data.fd, events[i].events);
        }
      }
      FireTimers(SteadyNs());
    }
  }

 private:
  static constexpr size_t kMaxBuffered = RequestParser::kMaxHead + RequestParser::kMaxBody;

  struct Connection {
    int fd = -1;
    std::string in;
    std::string out;
    size_t out_sent = 0;
    RequestParser parser;
    Request waiting;              // held until its timer fires
    uint64_t waiting_serial = 0;  // 0: none; else the timer that answers it
    bool close_after = false;
    bool want_write = false;
  };

  struct Timer {
    int64_t at_ns;
    int fd;
    uint64_t serial;  // tells a timer of a closed connection from one of its fd's reuser
    bool operator>(const Timer& other) const { return at_ns > other.at_ns; }
  };

  int TimeoutMs(int64_t now) const {
    if (timers_.empty()) return -1;
    const int64_t left = timers_.top().at_ns - now;
    return left <= 0 ? 0 : static_cast<int>((left + 999'999) / 1'000'000);
  }

  void Accept() {
    for (int i = 0; i < 64; ++i) {
      const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        if ((errno == EMFILE || errno == ENFILE) && spare_fd_ >= 0) {
          close(spare_fd_);
          const int refused = accept(listen_fd_, nullptr, nullptr);
          if (refused >= 0) close(refused);
          spare_fd_ = open("/dev/null", O_RDONLY | O_CLOEXEC);
          std::fprintf(stderr, "out of file descriptors: refused a connection\n");
        }
        return;  // EAGAIN, or another loop took it
      }
      const int one = 1;
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      epoll_event ev{};
      ev.events = EPOLLIN;
      ev.data.fd = fd;
      if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) != 0) {
        close(fd);
        continue;
      }
      if (static_cast<size_t>(fd) >= connections_.size())
        connections_.resize(static_cast<size_t>(fd) + 1);
      connections_[fd] = std::make_unique<Connection>();
      connections_[fd]->fd = fd;
    }
  }

  Connection* Find(int fd) {
    return fd >= 0 && static_cast<size_t>(fd) < connections_.size() ? connections_[fd].get()
                                                                    : nullptr;
  }

  void Close(Connection& c) {
    const int fd = c.fd;
    epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
    close(fd);
    connections_[fd].reset();  // its timer, if any, finds nothing and is dropped
  }

  void OnEvent(int fd, uint32_t events) {
    Connection* c = Find(fd);
    if (c == nullptr) return;
    if (events & (EPOLLERR | EPOLLHUP)) return Close(*c);
    if (events & EPOLLIN) {
      char buffer[65536];
      const ssize_t n = recv(fd, buffer, sizeof buffer, 0);
      if (n == 0) {
        // The client is gone (a timed-out sender closes): an answer it cannot read is not
        // counted as given, so a request still waiting is dropped with the connection.
        return Close(*c);
      }
      if (n < 0) {
        if (errno != EAGAIN && errno != EINTR) return Close(*c);
      } else {
        c->in.append(buffer, static_cast<size_t>(n));
        // Only a client that sends on while its answer is held grows this far.
        if (c->in.size() > kMaxBuffered) return Close(*c);
      }
    }
    Advance(*c);
  }

  // Answers what `c` has buffered, one request at a time, until it needs more bytes, the
  // socket is full, or a request waits for its timer. Closes `c` when it is done with it.
  void Advance(Connection& c) {
    for (;;) {
      if (!Flush(c)) return Close(c);
      if (!c.out.empty()) return WantWrite(c, true);
      WantWrite(c, false);
      if (c.close_after) return Close(c);
      if (c.waiting_serial != 0) return;
      size_t consumed = 0;
      const auto status = c.parser.Parse(c.in, consumed);
      c.in.erase(0, consumed);
      if (status == RequestParser::Status::kIncomplete) {
        if (!c.parser.TakeContinue()) return;
        c.out = "HTTP/1.1 100 Continue\r\n\r\n";
        continue;
      }
      if (status == RequestParser::Status::kBad) {
        Queue(c, Response{c.parser.error_status(), {}}, false);
        continue;
      }
      Request request = c.parser.TakeRequest();
      const int64_t wait = handler_.WaitNs(request);
      if (wait > 0) {
        c.waiting = std::move(request);
        c.waiting_serial = ++serial_;
        timers_.push(Timer{SteadyNs() + wait, c.fd, c.waiting_serial});
        return;
      }
      Queue(c, handler_.Answer(request), request.keep_alive);
    }
  }

  void FireTimers(int64_t now) {
    while (!timers_.empty() && timers_.top().at_ns <= now) {
      const Timer timer = timers_.top();
      timers_.pop();
      Connection* c = Find(timer.fd);
      if (c == nullptr || c->waiting_serial != timer.serial) continue;
      c->waiting_serial = 0;
      Request request = std::move(c->waiting);
      Queue(*c, handler_.Answer(request), request.keep_alive);
      Advance(*c);
    }
  }

  static const char* Reason(int status) {
    switch (status) {
      case 100:
        return "Continue";
      case 200:
        return "OK";
      case 400:
        return "Bad Request";
      case 404:
        return "Not Found";
      case 413:
        return "Content Too Large";
      case 417:
        return "Expectation Failed";
      case 431:
        return "Request Header Fields Too Large";
      case 501:
        return "Not Implemented";
      case 503:
        return "Service Unavailable";
      case 505:
        return "HTTP Version Not Supported";
      default:
        return "Status";
    }
  }

  static void Queue(Connection& c, const Response& response, bool keep_alive) {
    c.out += "HTTP/1.1 " + std::to_string(response.status) + ' ' + Reason(response.status) +
             "\r\nContent-Length: " + std::to_string(response.body.size()) + "\r\n";
    if (!response.body.empty()) c.out += "Content-Type: text/plain\r\n";
    if (!keep_alive) c.out += "Connection: close\r\n";
    c.out += "\r\n";
    c.out += response.body;
    c.close_after = !keep_alive;
  }

  // Sends what it can; false on a dead connection.
  static bool Flush(Connection& c) {
    while (c.out_sent < c.out.size()) {
      const ssize_t n = send(c.fd, c.out.data() + c.out_sent, c.out.size() - c.out_sent,
                             MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n < 0) {
        if (errno == EINTR) continue;
        return errno == EAGAIN || errno == EWOULDBLOCK;
      }
      c.out_sent += static_cast<size_t>(n);
    }
    c.out.clear();
    c.out_sent = 0;
    return true;
  }

  void WantWrite(Connection& c, bool want) {
    if (c.want_write == want) return;
    c.want_write = want;
    epoll_event ev{};
    ev.events = EPOLLIN | (want ? EPOLLOUT : 0u);
    ev.data.fd = c.fd;
    epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, c.fd, &ev);
  }

  const int listen_fd_;
  Handler& handler_;
  const int epoll_fd_;
  int spare_fd_ = -1;
  std::vector<std::unique_ptr<Connection>> connections_;  // by fd
  std::priority_queue<Timer, std::vector<Timer>, std::greater<>> timers_;
  uint64_t serial_ = 0;
};

}  // namespace webhookd::bench

#endif  // WEBHOOKD_BENCH_HTTP_LOOP_H_
