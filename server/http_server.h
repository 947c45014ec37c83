#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/config.h"
#include "server/auth_limiter.h"
#include "server/http_listener.h"
#include "server/key_concurrency.h"
#include "server/problem.h"
#include "store/operations_store.h"

namespace webhookd {

class Api;
class Authenticator;
struct RouteSpec;

// Counts one answered request (for webhookd_http_requests_total).
using RequestObserver = std::function<void(std::string_view route, int status)>;
// The Prometheus text of /metrics.
using MetricsSource = std::function<std::string()>;

// /healthz, /readyz, /metrics and, when given an Api, the REST API and the console, on
// an HttpListener: routing, authentication before a body is read, and the answers.
class HttpServer : private HttpHandler {
 public:
  // Requests in progress per API key on a route that limits them (POST /v1/filters/test).
  static constexpr int kPerKeyLimit = 2;
  struct Options {
    ListenAddress addr;
    size_t max_payload_bytes = 262144;
    int threads = 128;     // handler threads: requests being answered at once
    bool serve_ui = true;  // the console under /ui/ (only where the REST API is served)
    // Connections open at once, in all and from one client (HttpListener::Options).
    int max_connections = 10000;
    int max_connections_per_client = 256;
  };

  // Borrows every argument; `api`, `auth`, `observer` and `metrics` may be null/empty.
  HttpServer(OperationsStore& operations, Api* api, Authenticator* auth, Options options,
             RequestObserver observer = nullptr, MetricsSource metrics = nullptr);
  ~HttpServer() override;

  // Every route served, as "METHOD /path" with "{}" for a path segment: the REST API's
  // table and the operations routes (/healthz, /readyz, /metrics, /openapi.json, /ui/).
  static std::vector<std::string> Routes();

  // Binds the listener; returns the bound port (useful with port 0).
  Result<int> Bind();
  // Serves until Stop(); call after Bind().
  void Run();
  // Closes the listener and lets in-progress requests finish. Thread-safe.
  void Stop();

 private:
  using Route = struct RouteSpec;
  // HttpHandler: the listener's three questions, and its own refusals.
  std::optional<Reply> Immediate(HttpRequest& head) override;
  std::optional<Reply> Admit(HttpRequest& head) override;
  Reply Handle(HttpRequest& request) override;
  bool Begin(const HttpRequest& request, Later later) override;
  bool HandleLater(HttpRequest& request, Later later) override;
  Reply Refused(int status) override;

  // /readyz and /metrics (they wait on the database); nullopt for any other path.
  std::optional<Reply> ServeOperations(const HttpRequest& req);
  // The route for `method` on `path` (its {} segments in `args`), or null; `allow` lists
  // the methods the path takes.
  const Route* FindRoute(const std::string& method, std::string_view path,
                         std::vector<std::string>* args, std::string* allow) const;
  static Reply Unrouted(const HttpRequest& req, const std::string& allow);
  // Authenticates and checks the content type: the answer that ends the request, or
  // nullopt with what the key may see kept in `head.context`.
  std::optional<Reply> AdmitRoute(const Route& route, HttpRequest& head,
                                  std::vector<std::string> args);
  // The Content-Type and Content-Encoding refusals (415), or nullopt.
  static std::optional<Reply> CheckContent(const Route& route, const HttpRequest& req);
  // Calls the route's Api method.
  Result<Reply> Call(const Route& route, HttpRequest& request);
  // The reply to send for a route's result (a problem for an error, logged when it is
  // the server's), counted for the route.
  Reply Answer(const Route& route, const std::string& method, Result<Reply> reply);
  void Observe(std::string_view route, int status);
  // The database's readiness, asked at most once a second whoever asks.
  Result<bool> Ready();

  OperationsStore& operations_;
  Api* api_;
  Authenticator* auth_;
  Options options_;
  RequestObserver observer_;
  MetricsSource metrics_;
  SystemClock clock_;
  FailedAuthLimiter auth_failures_;
  // Requests in progress per key, on the routes marked limited_per_key.
  KeyConcurrency per_key_{kPerKeyLimit};
  std::atomic<int> later_{0};  // requests Begin took and has not answered yet
  std::mutex ready_mu_;        // guards the two below; held while the database is asked
  std::optional<Result<bool>> ready_;
  std::chrono::steady_clock::time_point ready_at_;
  std::unique_ptr<HttpListener> listener_;
};

}  // namespace webhookd
