#pragma once

#include <functional>
#include <memory>
#include <string>

#include "core/config.h"
#include "core/store.h"

namespace httplib {
class Server;
}

namespace webhookd {

class Api;
class Authenticator;

// Counts one answered request (for webhookd_http_requests_total).
using RequestObserver = std::function<void(std::string_view route, int status)>;
// The Prometheus text of /metrics.
using MetricsSource = std::function<std::string()>;

// cpp-httplib serving /healthz, /readyz, /metrics and, when given an Api, the REST API.
class HttpServer {
 public:
  struct Options {
    ListenAddress addr;
    size_t max_payload_bytes = 262144;
    int threads = 128;     // one per keep-alive connection being served
    bool serve_ui = true;  // the console under /ui/ (only where the REST API is served)
  };

  // Borrows every argument; `api`, `auth`, `observer` and `metrics` may be null/empty.
  HttpServer(Store& store, Api* api, Authenticator* auth, Options options,
             RequestObserver observer = nullptr, MetricsSource metrics = nullptr);
  ~HttpServer();

  // Binds the listener; returns the bound port (useful with port 0).
  Result<int> Bind();
  // Serves until Stop(); call after Bind().
  void Run();
  // Closes the listener and lets in-progress requests finish. Thread-safe.
  void Stop();

 private:
  void Setup();

  Store& store_;
  Api* api_;
  Authenticator* auth_;
  Options options_;
  RequestObserver observer_;
  MetricsSource metrics_;
  std::unique_ptr<httplib::Server> http_;
  int listen_fd_ = -1;
};

}  // namespace webhookd
