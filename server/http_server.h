#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/config.h"
#include "server/problem.h"
#include "store/operations_store.h"

namespace httplib {
class Server;
struct Request;
struct Response;
}  // namespace httplib

namespace webhookd {

class Api;
class Authenticator;
struct RouteSpec;

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
  HttpServer(OperationsStore& operations, Api* api, Authenticator* auth, Options options,
             RequestObserver observer = nullptr, MetricsSource metrics = nullptr);
  ~HttpServer();

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
  void Setup();
  void Dispatch(const httplib::Request& req, httplib::Response& res);
  // /healthz, /readyz, /metrics; false when the path is none of them.
  bool ServeOperations(const httplib::Request& req, httplib::Response& res);
  // The route for `method` on `path` (its {} segments in `args`), or null; `allow` lists
  // the methods the path takes.
  const Route* FindRoute(const std::string& method, std::string_view path,
                         std::vector<std::string>* args, std::string* allow) const;
  static void Unrouted(const httplib::Request& req, httplib::Response& res,
                       const std::string& allow);
  // Authenticates, checks the content type and calls the route's Api method.
  Result<Reply> Handle(const Route& route, const httplib::Request& req,
                       std::vector<std::string> args);
  // An answer httplib made itself (413, a bad request line), as problem+json.
  void HandleLibraryError(const httplib::Request& req, httplib::Response& res);
  void Observe(std::string_view route, int status);

  OperationsStore& operations_;
  Api* api_;
  Authenticator* auth_;
  Options options_;
  RequestObserver observer_;
  MetricsSource metrics_;
  std::unique_ptr<httplib::Server> http_;
  int listen_fd_ = -1;
};

}  // namespace webhookd
