#include "server/http_server.h"

#include <httplib.h>
#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <cctype>

#include "base/log.h"
#include "server/api.h"
#include "server/auth.h"
#include "server/openapi.h"
#include "server/problem.h"
#include "server/ui_assets.h"

namespace webhookd {

using Handler = Result<Reply> (Api::*)(const ApiRequest&);

enum class Body { kNone, kRequired, kOptional };

struct RouteSpec {
  std::string_view method;
  std::string_view pattern;  // "{}" stands for one path segment
  // Who may use it (Access): admin keys always, publisher keys unless `role` is kAdmin,
  // tenant keys where `tenant_ok` (they then see their own tenant's rows alone).
  Role role;
  bool tenant_ok;
  Handler handler;
  Body body;
  // The hot ingest route checks a recently seen key inside its own transaction instead
  // of looking it up first (Authenticator::CheckOrDefer).
  bool defer_auth = false;
};

namespace {

constexpr bool kTenantOk = true;
constexpr bool kNotTenant = false;

constexpr std::array kRoutes = {
    RouteSpec{"POST", "/v1/destinations", Role::kPublisher, kTenantOk, &Api::CreateDestination,
              Body::kRequired},
    RouteSpec{"GET", "/v1/destinations", Role::kPublisher, kTenantOk, &Api::ListDestinations,
              Body::kNone},
    RouteSpec{"GET", "/v1/destinations/{}", Role::kPublisher, kTenantOk, &Api::GetDestination,
              Body::kNone},
    RouteSpec{"PATCH", "/v1/destinations/{}", Role::kPublisher, kTenantOk, &Api::UpdateDestination,
              Body::kRequired},
    RouteSpec{"DELETE", "/v1/destinations/{}", Role::kPublisher, kTenantOk, &Api::DeleteDestination,
              Body::kNone},
    RouteSpec{"GET", "/v1/destinations/{}/secret", Role::kPublisher, kTenantOk,
              &Api::GetDestinationSecret, Body::kNone},
    RouteSpec{"POST", "/v1/destinations/{}/secret/rotate", Role::kPublisher, kTenantOk,
              &Api::RotateDestinationSecret, Body::kOptional},
    RouteSpec{"POST", "/v1/events", Role::kPublisher, kNotTenant, &Api::CreateEvent,
              Body::kRequired, true},
    RouteSpec{"GET", "/v1/events", Role::kPublisher, kTenantOk, &Api::ListEvents, Body::kNone},
    RouteSpec{"GET", "/v1/events/{}", Role::kPublisher, kTenantOk, &Api::GetEvent, Body::kNone},
    RouteSpec{"GET", "/v1/deliveries", Role::kPublisher, kTenantOk, &Api::ListDeliveries,
              Body::kNone},
    RouteSpec{"GET", "/v1/deliveries/{}", Role::kPublisher, kTenantOk, &Api::GetDelivery,
              Body::kNone},
    RouteSpec{"GET", "/v1/deliveries/{}/attempts", Role::kPublisher, kTenantOk, &Api::ListAttempts,
              Body::kNone},
    RouteSpec{"GET", "/v1/admin/dead-letters", Role::kAdmin, kTenantOk, &Api::ListDeadLetters,
              Body::kNone},
    RouteSpec{"POST", "/v1/admin/dead-letters/replay", Role::kAdmin, kTenantOk,
              &Api::ReplayDeadLetters, Body::kOptional},
    RouteSpec{"GET", "/v1/admin/stats", Role::kAdmin, kNotTenant, &Api::GetStats, Body::kNone},
    RouteSpec{"GET", "/v1/admin/stats/series", Role::kAdmin, kNotTenant, &Api::GetStatsSeries,
              Body::kNone},
    RouteSpec{"POST", "/v1/admin/dead-letters/{}/replay", Role::kAdmin, kTenantOk,
              &Api::ReplayDeadLetter, Body::kOptional},
    RouteSpec{"GET", "/v1/admin/tenants", Role::kAdmin, kNotTenant, &Api::ListTenants, Body::kNone},
    RouteSpec{"POST", "/v1/admin/tenants/{}/portal-links", Role::kAdmin, kNotTenant,
              &Api::CreatePortalLink, Body::kOptional},
};

// Matches `path` against `pattern` segment by segment, collecting the "{}" segments.
bool Match(std::string_view pattern, std::string_view path, std::vector<std::string>* args) {
  args->clear();
  while (!pattern.empty() && !path.empty()) {
    if (pattern.front() != '/' || path.front() != '/') return false;
    pattern.remove_prefix(1);
    path.remove_prefix(1);
    const size_t p_end = std::min(pattern.find('/'), pattern.size());
    const size_t s_end = std::min(path.find('/'), path.size());
    const std::string_view p = pattern.substr(0, p_end);
    const std::string_view s = path.substr(0, s_end);
    if (p == "{}") {
      if (s.empty()) return false;
      args->emplace_back(s);
    } else if (p != s) {
      return false;
    }
    pattern.remove_prefix(p_end);
    path.remove_prefix(s_end);
  }
  return pattern.empty() && path.empty();
}

bool IsJsonContentType(std::string_view value) {
  const std::string_view media = value.substr(0, value.find(';'));
  std::string lower;
  for (char c : media) {
    if (c != ' ' && c != '\t')
      lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return lower == "application/json";
}

void Write(httplib::Response& res, const Reply& reply) {
  res.status = reply.status;
  for (const auto& [name, value] : reply.headers) res.set_header(name, value);
  if (reply.status != 204) res.set_content(reply.body, reply.content_type.c_str());
}

// The page may run only its own scripts and styles and talk only to this origin, so an
// API string that slipped into markup could still not run or send anything anywhere.
constexpr const char* kUiContentSecurityPolicy =
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

// The console under /ui/: true when `req` was for it and `res` holds the answer.
bool ServeUi(const httplib::Request& req, httplib::Response& res) {
  const std::string& path = req.path;
  if (path != "/ui" && !path.starts_with("/ui/")) return false;
  // On every answer, a 404 included: the headers protect whatever a browser renders.
  res.set_header("Content-Security-Policy", kUiContentSecurityPolicy);
  res.set_header("X-Content-Type-Options", "nosniff");
  res.set_header("Referrer-Policy", "no-referrer");
  res.set_header("X-Frame-Options", "DENY");
  res.set_header("Cache-Control", "no-cache");
  if (req.method != "GET" && req.method != "HEAD") {
    Reply reply = ProblemReply(405, req.method + " is not allowed here; use GET");
    reply.headers.emplace_back("Allow", "GET, HEAD");
    Write(res, reply);
    return true;
  }
  if (path == "/ui") {
    res.status = 301;
    res.set_header("Location", "/ui/");
    return true;
  }
  std::string_view file = std::string_view(path).substr(4);
  if (file.empty()) file = "index.html";
  const Asset* asset = FindUiAsset(file);
  if (asset == nullptr) {
    Write(res, ProblemReply(404, "no console file " + path));
    return true;
  }
  res.status = 200;
  res.set_content(asset->bytes.data(), asset->bytes.size(), std::string(asset->content_type));
  return true;
}

}  // namespace

HttpServer::HttpServer(OperationsStore& operations, Api* api, Authenticator* auth, Options options,
                       RequestObserver observer, MetricsSource metrics)
    : operations_(operations),
      api_(api),
      auth_(auth),
      options_(std::move(options)),
      observer_(std::move(observer)),
      metrics_(std::move(metrics)),
      http_(std::make_unique<httplib::Server>()) {
  Setup();
}

HttpServer::~HttpServer() = default;

void HttpServer::Setup() {
  httplib::Server& http = *http_;
  // Without TCP_NODELAY every response waits ~40 ms on delayed ACKs.
  http.set_tcp_nodelay(true);
  // Debian's cpp-httplib listens with a backlog of 5: 64 clients connecting at once
  // overflow it and stall for a SYN retransmit. Remember the socket to listen() again.
  http.set_socket_options([this](socket_t sock) {
    httplib::default_socket_options(sock);
    listen_fd_ = sock;
  });
  http.set_keep_alive_max_count(100000);
  http.set_keep_alive_timeout(30);
  http.set_read_timeout(10);
  http.set_write_timeout(10);
  http.set_payload_max_length(options_.max_payload_bytes);
  // Threads: the pool serves one keep-alive connection per thread at a time.
  const int threads = options_.threads;
  http.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };

  const auto dispatch = [this](const httplib::Request& req, httplib::Response& res) {
    Dispatch(req, res);
  };
  // RFC 9112 §6.3: a request with neither Content-Length nor Transfer-Encoding has no
  // body. httplib would read such a POST/PUT/PATCH to EOF instead, so `curl -X POST
  // .../replay` hung until the read timeout and then got a 400: serve it now, bodiless.
  http.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    if ((req.method == "POST" || req.method == "PUT" || req.method == "PATCH") &&
        !req.has_header("Content-Length") && !req.has_header("Transfer-Encoding")) {
      Dispatch(req, res);
      return httplib::Server::HandlerResponse::Handled;
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });
  const char* kAll = R"(.*)";
  http.Get(kAll, dispatch);
  http.Post(kAll, dispatch);
  http.Put(kAll, dispatch);
  http.Patch(kAll, dispatch);
  http.Delete(kAll, dispatch);
  http.Options(kAll, dispatch);

  // Answers httplib makes itself (a body over the limit, a bad request line) become
  // problem+json too.
  http.set_error_handler(httplib::Server::HandlerWithResponse(
      [this](const httplib::Request& req, httplib::Response& res) {
        if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
        HandleLibraryError(req, res);
        return httplib::Server::HandlerResponse::Handled;
      }));
  http.set_exception_handler(
      [](const httplib::Request& req, httplib::Response& res, const std::exception_ptr& ep) {
        std::string what = "unknown";
        try {
          if (ep) std::rethrow_exception(ep);
        } catch (const std::exception& e) {
          what = e.what();
        } catch (...) {
        }
        Log(LogLevel::kError, "handler threw", {{"path", req.path}, {"error", what}});
        Write(res, ProblemReply(500, "an internal error occurred"));
      });
}

std::vector<std::string> HttpServer::Routes() {
  std::vector<std::string> routes;
  routes.reserve(std::size(kRoutes) + 5);
  for (const RouteSpec& r : kRoutes) {
    routes.push_back(std::string(r.method) + " " + std::string(r.pattern));
  }
  for (const char* path : {"/healthz", "/readyz", "/metrics", "/openapi.json", "/ui/"}) {
    routes.push_back(std::string("GET ") + path);
  }
  return routes;
}

void HttpServer::Observe(std::string_view route, int status) {
  if (observer_) observer_(route, status);
}

bool HttpServer::ServeOperations(const httplib::Request& req, httplib::Response& res) {
  const std::string& path = req.path;
  // The route's name for the metrics: a literal, never the request's own memory.
  std::string_view route;
  if (path == "/healthz") {
    route = "/healthz";
    Write(res, Reply{200, R"({"status":"ok"})", "application/json", {}});
  } else if (path == "/readyz") {
    route = "/readyz";
    auto ready = operations_.Ready();
    const bool ok = ready && *ready;
    if (!ready) Log(LogLevel::kWarn, "not ready", {{"error", ready.error().message}});
    Write(res, ok ? Reply{200, R"({"status":"ready"})", "application/json", {}}
                  : ProblemReply(
                        503, ready ? "migrations are not applied" : "the database is unavailable"));
  } else if (path == "/openapi.json" && api_ != nullptr) {
    route = "/openapi.json";
    if (req.method != "GET" && req.method != "HEAD") {
      Reply reply = ProblemReply(405, req.method + " is not allowed here; use GET");
      reply.headers.emplace_back("Allow", "GET");
      Write(res, reply);
    } else {
      const std::string_view spec = OpenApiJson();
      res.set_content(spec.data(), spec.size(), "application/json");
    }
  } else if (path == "/metrics" && metrics_) {
    route = "/metrics";
    if (req.method != "GET" && req.method != "HEAD") {
      Write(res, ProblemReply(405, "use GET"));
    } else {
      res.set_content(metrics_(), "text/plain; version=0.0.4; charset=utf-8");
    }
  } else {
    return false;
  }
  Observe(route, res.status);
  return true;
}

const HttpServer::Route* HttpServer::FindRoute(const std::string& method, std::string_view path,
                                               std::vector<std::string>* args,
                                               std::string* allow) const {
  allow->clear();
  if (api_ == nullptr) return nullptr;
  const Route* found = nullptr;
  for (const Route& route : kRoutes) {
    if (!Match(route.pattern, path, args)) continue;
    if (found == nullptr &&
        (route.method == method || (method == "HEAD" && route.method == "GET"))) {
      found = &route;
    }
    if (!allow->empty()) *allow += ", ";
    *allow += route.method;
  }
  // `args` may hold a later pattern's segments: match the one found again.
  if (found != nullptr) Match(found->pattern, path, args);
  return found;
}

// 404 for a path no route has, 405 with Allow for a method the path does not take.
void HttpServer::Unrouted(const httplib::Request& req, httplib::Response& res,
                          const std::string& allow) {
  Reply reply = allow.empty()
                    ? ProblemReply(404, "no route " + req.path)
                    : ProblemReply(405, req.method + " is not allowed here; use " + allow);
  if (!allow.empty()) reply.headers.emplace_back("Allow", allow);
  Write(res, reply);
}

void HttpServer::Dispatch(const httplib::Request& req, httplib::Response& res) {
  if (ServeOperations(req, res)) return;
  std::vector<std::string> args;
  std::string allow;
  const Route* route = FindRoute(req.method, req.path, &args, &allow);
  if (route == nullptr && options_.serve_ui && api_ != nullptr && ServeUi(req, res)) {
    Observe("/ui", res.status);
    return;
  }
  if (route == nullptr) {
    Unrouted(req, res, allow);
    Observe("unmatched", res.status);
    return;
  }
  Result<Reply> reply = Handle(*route, req, std::move(args));
  if (reply) {
    Write(res, *reply);
  } else {
    if (reply.error().kind == ErrorKind::kInternal ||
        reply.error().kind == ErrorKind::kUnavailable) {
      Log(LogLevel::kError, "request failed",
          {{"route", route->pattern}, {"method", req.method}, {"error", reply.error().message}});
    }
    Write(res, ProblemReply(reply.error()));
  }
  Observe(route->pattern, res.status);
}

Result<Reply> HttpServer::Handle(const Route& route, const httplib::Request& req,
                                 std::vector<std::string> args) {
  if (auth_ == nullptr) return Fail(ErrorKind::kInternal, "no authenticator");
  const std::string authorization = req.get_header_value("Authorization");
  const Access access{route.role, route.tenant_ok};
  std::optional<std::string> deferred;
  // What the key may see, set only by a successful check.
  std::optional<Scope> scope;
  if (route.defer_auth) {
    WEBHOOKD_ASSIGN_OR_RETURN(auto ok, auth_->CheckOrDefer(authorization, access));
    scope = std::move(ok.scope);
    deferred = std::move(ok.key_hash);
  } else {
    WEBHOOKD_ASSIGN_OR_RETURN(scope, auth_->Check(authorization, access));
  }
  if (route.body == Body::kRequired || (route.body == Body::kOptional && !req.body.empty())) {
    if (!IsJsonContentType(req.get_header_value("Content-Type"))) {
      return Fail(ErrorKind::kUnsupportedMediaType, "Content-Type must be application/json");
    }
  }
  ApiRequest api_req(std::move(*scope));
  api_req.path_args = std::move(args);
  api_req.query.insert(req.params.begin(), req.params.end());
  api_req.body = req.body;
  if (req.has_header("Idempotency-Key")) {
    api_req.idempotency_key = req.get_header_value("Idempotency-Key");
  }
  api_req.unverified_key_hash = deferred;
  Result<Reply> handled = (api_->*route.handler)(api_req);
  // A key revoked since it was seen gets its 401, not another answer, so an error
  // with a deferred key is answered only after a real lookup.
  if (!handled && deferred) {
    if (handled.error().kind == ErrorKind::kUnauthorized) auth_->Forget(*deferred);
    if (auto ok = auth_->Check(authorization, access); !ok) return Propagate(ok);
  }
  return handled;
}

void HttpServer::HandleLibraryError(const httplib::Request& req, httplib::Response& res) {
  // httplib answers 400 to a method it parses but has no handlers for (TRACE, CONNECT):
  // that is a wrong method (405) on a route, or an unknown route (404).
  if (res.status == 400 && (req.method == "TRACE" || req.method == "CONNECT")) {
    std::vector<std::string> args;
    std::string allow;
    FindRoute(req.method, req.path, &args, &allow);
    Unrouted(req, res, allow);
    return;
  }
  const int status = res.status;
  Write(res,
        ProblemReply(status, status == 413 ? "the body is larger than WEBHOOKD_MAX_PAYLOAD_BYTES"
                                           : "the request could not be served"));
}

Result<int> HttpServer::Bind() {
  const std::string& host = options_.addr.host;
  int port = options_.addr.port;
  if (port == 0) {
    port = http_->bind_to_any_port(host);
    if (port < 0) return Fail(ErrorKind::kUnavailable, "cannot listen on " + host + ":0");
  } else if (!http_->bind_to_port(host, port)) {
    return Fail(ErrorKind::kUnavailable, "cannot listen on " + host + ":" + std::to_string(port));
  }
  if (listen_fd_ >= 0) ::listen(listen_fd_, 1024);
  return port;
}

void HttpServer::Run() { http_->listen_after_bind(); }

void HttpServer::Stop() { http_->stop(); }

}  // namespace webhookd
