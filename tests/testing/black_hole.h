#pragma once

// Where a connect gets no answer, and the names that lead there: for the tests that an
// attempt keeps one deadline however many addresses a broker's name has.

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <string>
#include <vector>

#include "net/resolver.h"

namespace webhookd::testing {

// A TCP port on every loopback address whose accept queue is full and never accepted
// from: the kernel drops each further SYN, so a connect to it waits for its own timeout,
// as to a host that drops packets.
class BlackHole {
 public:
  BlackHole() {
    listener_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_ANY);
    bind(listener_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
    listen(listener_, 0);
    socklen_t len = sizeof(addr);
    getsockname(listener_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    // A queue of 0 takes one connection: these fill it (the later ones wait, unanswered).
    for (int i = 0; i < 3; ++i) {
      const int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
      sockaddr_in to{};
      to.sin_family = AF_INET;
      to.sin_port = htons(static_cast<uint16_t>(port_));
      to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof(to));
      fillers_.push_back(fd);
    }
    usleep(100'000);  // the first handshakes complete
  }
  ~BlackHole() {
    for (int fd : fillers_) close(fd);
    close(listener_);
  }
  BlackHole(const BlackHole&) = delete;
  BlackHole& operator=(const BlackHole&) = delete;

  int port() const { return port_; }

 private:
  int listener_ = -1;
  int port_ = 0;
  std::vector<int> fillers_;
};

// Every name resolves to `count` loopback addresses, 127.0.0.2 and on.
class ManyAddresses final : public Resolver {
 public:
  explicit ManyAddresses(int count) : count_(count) {}
  Result<std::vector<IpAddress>> Resolve(const std::string&) override {
    std::vector<IpAddress> all;
    for (int i = 0; i < count_; ++i)
      all.push_back(IpAddress::V4(0x7f000002u + static_cast<uint32_t>(i)));
    return all;
  }

 private:
  int count_;
};

}  // namespace webhookd::testing
