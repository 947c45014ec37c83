#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tests/testing/process.h"

namespace webhookd::testing {

// A real forward proxy, Debian's tinyproxy (scripts/test installs it), on a free loopback
// port: CONNECT allowed to any port, every request logged. Stop and Start keep the port.
class ForwardProxy {
 public:
  ForwardProxy();  // started; throws std::runtime_error if tinyproxy cannot start
  ~ForwardProxy();
  ForwardProxy(const ForwardProxy&) = delete;
  ForwardProxy& operator=(const ForwardProxy&) = delete;

  int port() const { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  void Stop();
  void Start();
  // The targets of the CONNECTs it was asked for so far, as "host:port", in order.
  std::vector<std::string> Connects() const;

 private:
  std::string dir_;
  int port_ = 0;
  std::unique_ptr<Process> process_;
};

}  // namespace webhookd::testing
