#pragma once

#include <httplib.h>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace webhookd::testing {

// One request a Receiver got.
struct Received {
  std::string path;
  httplib::Headers headers;
  std::string body;
  std::chrono::steady_clock::time_point at;
  std::string header(const std::string& name) const {
    auto it = headers.find(name);
    return it == headers.end() ? "" : it->second;
  }
};

// What to answer; the default is 200 with an empty body.
struct Answer {
  int status = 200;
  std::string body;
  httplib::Headers headers;
  std::chrono::milliseconds delay{0};
};

// A real HTTP server on 127.0.0.1 recording every request and answering as scripted.
class Receiver {
 public:
  using Script = std::function<Answer(const Received& request, int nth /* 0-based */)>;

  explicit Receiver(Script script = nullptr, const std::string& host = "127.0.0.1");
  ~Receiver();

  int port() const { return port_; }
  std::string url(const std::string& path = "/hook") const;
  void set_script(Script script);

  std::vector<Received> requests();
  size_t count();
  // Waits until at least `n` requests arrived; false on timeout.
  bool WaitFor(size_t n, std::chrono::milliseconds timeout);

 private:
  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
  std::string host_;
  std::mutex mu_;
  std::condition_variable cv_;
  Script script_;
  std::vector<Received> requests_;
};

}  // namespace webhookd::testing
