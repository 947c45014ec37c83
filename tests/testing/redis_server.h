#pragma once

// A real redis-server for the tests: on a free loopback port, without persistence, its
// log in WEBHOOKD_TEST_LOG_DIR. Stop (SIGKILL) and Start again on the same port; Pause
// (SIGSTOP) and Resume make a hung broker.

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tests/testing/process.h"

namespace webhookd::testing {

class RedisServer {
 public:
  explicit RedisServer(std::vector<std::string> extra = {});
  void Start();
  void Stop();
  void Pause();
  void Resume();
  int port() const { return port_; }
  std::string url() const { return "redis://127.0.0.1:" + std::to_string(port_); }

  // Each entry of `stream`, as its fields in order.
  std::vector<std::vector<std::pair<std::string, std::string>>> Entries(
      const std::string& stream, const std::string& password = "");

 private:
  int port_;
  std::vector<std::string> extra_;
  std::unique_ptr<Process> process_;
};

}  // namespace webhookd::testing
