#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/clock.h"
#include "net/resolver.h"
#include "worker/sender.h"
#include "worker/watchdog.h"

namespace httplib {
class Client;
}

namespace webhookd {

// Sends over HTTP(S) with cpp-httplib: the host is resolved and vetted here and the vetted
// address itself is connected to (so DNS rebinding cannot slip past the check), redirects
// are not followed, the whole attempt is bounded by a watchdog, and connections are kept
// alive and reused per destination origin.
class HttpSender final : public Sender {
 public:
  struct Options {
    Duration connect_timeout = std::chrono::seconds(5);
    Duration attempt_timeout = std::chrono::seconds(15);
    bool allow_private = false;
    size_t max_response_read = 64 * 1024;  // read no further; the connection is then dropped
    size_t max_idle_per_origin = 64;
  };

  // Borrows `resolver`, which must outlive the sender.
  HttpSender(Resolver& resolver, Options options);
  ~HttpSender() override;

  // Sender:
  SendResult Send(const Outgoing& request) override;

 private:
  std::unique_ptr<httplib::Client> Checkout(const std::string& key);
  void Return(const std::string& key, std::unique_ptr<httplib::Client> client);

  Resolver& resolver_;
  Options options_;
  Watchdog watchdog_;
  std::mutex mu_;
  std::unordered_map<std::string, std::vector<std::unique_ptr<httplib::Client>>> idle_;
};

}  // namespace webhookd
