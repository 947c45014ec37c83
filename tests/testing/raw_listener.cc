#include "tests/testing/raw_listener.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace webhookd::testing {
namespace {

constexpr int kPollMs = 50;

// Content-Length of a request head (0 when absent).
size_t ContentLength(std::string_view head) {
  std::string lower(head);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const size_t at = lower.find("\r\ncontent-length:");
  if (at == std::string::npos) return 0;
  return std::strtoull(lower.c_str() + at + 17, nullptr, 10);
}

}  // namespace

bool RawConnection::ReadRequest(std::string* request) {
  char buf[16384];
  for (;;) {
    const size_t end = buffered_.find("\r\n\r\n");
    if (end != std::string::npos) {
      const size_t total = end + 4 + ContentLength(std::string_view(buffered_).substr(0, end + 2));
      if (buffered_.size() >= total) {
        if (request != nullptr) *request = buffered_.substr(0, total);
        buffered_.erase(0, total);
        ++requests_;
        return true;
      }
    }
    if (stopping_) return false;
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, kPollMs) <= 0) continue;
    const ssize_t n = ::recv(fd_, buf, sizeof(buf), 0);
    if (n <= 0) return false;
    buffered_.append(buf, static_cast<size_t>(n));
  }
}

bool RawConnection::Write(std::string_view data) {
  while (!data.empty()) {
    if (stopping_) return false;
    pollfd p{fd_, POLLOUT, 0};
    if (::poll(&p, 1, kPollMs) <= 0) continue;
    if ((p.revents & (POLLERR | POLLHUP)) != 0) return false;
    const ssize_t n = ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

bool RawConnection::Sleep(std::chrono::milliseconds d) {
  const auto until = std::chrono::steady_clock::now() + d;
  for (;;) {
    if (stopping_) return false;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        until - std::chrono::steady_clock::now());
    if (left.count() <= 0) return true;
    // Wake early when the peer hangs up: a handler must not outlive its client's interest.
    pollfd p{fd_, POLLRDHUP, 0};
    if (::poll(&p, 1, static_cast<int>(std::min<int64_t>(kPollMs, left.count()))) > 0 &&
        (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0) {
      return false;
    }
  }
}

bool RawConnection::ReadAvailable(size_t max) {
  if (stopping_) return false;
  std::string buf(max, '\0');
  const ssize_t n = ::recv(fd_, buf.data(), buf.size(), MSG_DONTWAIT);
  return n > 0 || (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK));
}

void RawConnection::WaitForPeerClose() {
  char buf[4096];
  while (!stopping_) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, kPollMs) <= 0) continue;
    if (::recv(fd_, buf, sizeof(buf), 0) <= 0) return;
  }
}

RawListener::RawListener(std::string host, int port, Handler handler)
    : host_(std::move(host)), handler_(std::move(handler)) {
  const bool v6 = host_.find(':') != std::string::npos;
  fd_ = ::socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) throw std::runtime_error("socket failed");
  const int one = 1;
  ::setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_storage storage{};
  socklen_t len = 0;
  if (v6) {
    ::setsockopt(fd_, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
    auto* a = reinterpret_cast<sockaddr_in6*>(&storage);
    a->sin6_family = AF_INET6;
    a->sin6_port = htons(static_cast<uint16_t>(port));
    if (::inet_pton(AF_INET6, host_.c_str(), &a->sin6_addr) != 1)
      throw std::runtime_error("bad IPv6 address " + host_);
    len = sizeof(sockaddr_in6);
  } else {
    auto* a = reinterpret_cast<sockaddr_in*>(&storage);
    a->sin_family = AF_INET;
    a->sin_port = htons(static_cast<uint16_t>(port));
    if (::inet_pton(AF_INET, host_.c_str(), &a->sin_addr) != 1)
      throw std::runtime_error("bad IPv4 address " + host_);
    len = sizeof(sockaddr_in);
  }
  if (::bind(fd_, reinterpret_cast<sockaddr*>(&storage), len) != 0 || ::listen(fd_, 128) != 0) {
    const std::string why = std::strerror(errno);
    ::close(fd_);
    throw std::runtime_error("cannot listen on " + host_ + ":" + std::to_string(port) + ": " + why);
  }
  ::getsockname(fd_, reinterpret_cast<sockaddr*>(&storage), &len);
  port_ = ntohs(v6 ? reinterpret_cast<sockaddr_in6*>(&storage)->sin6_port
                   : reinterpret_cast<sockaddr_in*>(&storage)->sin_port);
  acceptor_ = std::thread([this] { AcceptLoop(); });
}

RawListener::~RawListener() {
  stopping_ = true;
  acceptor_.join();
  std::lock_guard lock(mu_);
  for (auto& t : connections_) t.join();
  ::close(fd_);
}

std::string RawListener::url(const std::string& path) const {
  const bool v6 = host_.find(':') != std::string::npos;
  return "http://" + (v6 ? "[" + host_ + "]" : host_) + ":" + std::to_string(port_) + path;
}

void RawListener::AcceptLoop() {
  while (!stopping_) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, kPollMs) <= 0) continue;
    const int conn = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (conn < 0) continue;
    ++accepted_;
    std::lock_guard lock(mu_);
    connections_.emplace_back([this, conn] {
      RawConnection c(conn, stopping_, requests_);
      handler_(c);
      ::close(conn);
    });
  }
}

RawListener::Handler RawListener::NeverAnswers() {
  return [](RawConnection& c) {
    if (c.ReadRequest()) c.WaitForPeerClose();
  };
}

RawListener::Handler RawListener::Trickles(std::chrono::milliseconds per_byte) {
  return [per_byte](RawConnection& c) {
    if (!c.ReadRequest()) return;
    const std::string response =
        "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 64\r\n\r\n" +
        std::string(64, 'x');
    for (char ch : response) {
      if (!c.Write(std::string_view(&ch, 1)) || !c.Sleep(per_byte)) return;
    }
  };
}

RawListener::Handler RawListener::ClosesMidResponse() {
  return [](RawConnection& c) {
    if (!c.ReadRequest()) return;
    c.Write("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 1000\r\n\r\npartial");
    c.Sleep(std::chrono::milliseconds(50));
  };
}

RawListener::Handler RawListener::HugeBody(size_t bytes) {
  return [bytes](RawConnection& c) {
    while (c.ReadRequest()) {
      if (!c.Write("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: " +
                   std::to_string(bytes) + "\r\n\r\n")) {
        return;
      }
      const std::string chunk(64 * 1024, 'b');
      for (size_t sent = 0; sent < bytes; sent += chunk.size()) {
        if (!c.Write(std::string_view(chunk).substr(0, std::min(chunk.size(), bytes - sent))))
          return;
      }
    }
  };
}

RawListener::Handler RawListener::Answers(int status) {
  return [status](RawConnection& c) {
    while (c.ReadRequest()) {
      if (!c.Write("HTTP/1.1 " + std::to_string(status) + " X\r\nContent-Length: 0\r\n\r\n"))
        return;
    }
  };
}

}  // namespace webhookd::testing
