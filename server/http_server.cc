#include "server/http_server.h"

#include <httplib.h>
#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <cctype>

#include "core/log.h"
#include "server/api.h"
#include "server/auth.h"
#include "server/problem.h"
#include "server/ui_assets.h"

namespace webhookd {
namespace {

using Handler = Result<Reply> (Api::*)(const ApiRequest&);

enum class Body { kNone, kRequired, kOptional };

struct Route {
  std::string_view method;
  std::string_view pattern;  // "{}" stands for one path segment
  Role role;
  Handler handler;
  Body body;
  // The hot ingest route checks a recently seen key inside its own transaction instead
  // of looking it up first (Authenticator::CheckOrDefer).
  bool defer_auth = false;
};

constexpr std::array kRoutes = {
    Route{"POST", "/v1/destinations", Role::kPublisher, &Api::CreateDestination, Body::kRequired},
    Route{"GET", "/v1/destinations", Role::kPublisher, &Api::ListDestinations, Body::kNone},
    Route{"GET", "/v1/destinations/{}", Role::kPublisher, &Api::GetDestination, Body::kNone},
    Route{"PATCH", "/v1/destinations/{}", Role::kPublisher, &Api::UpdateDestination,
          Body::kRequired},
    Route{"DELETE", "/v1/destinations/{}", Role::kPublisher, &Api::DeleteDestination, Body::kNone},
    Route{"GET", "/v1/destinations/{}/secret", Role::kPublisher, &Api::GetDestinationSecret,
          Body::kNone},
    Route{"POST", "/v1/events", Role::kPublisher, &Api::CreateEvent, Body::kRequired, true},
    Route{"GET", "/v1/events", Role::kPublisher, &Api::ListEvents, Body::kNone},
    Route{"GET", "/v1/events/{}", Role::kPublisher, &Api::GetEvent, Body::kNone},
    Route{"GET", "/v1/deliveries", Role::kPublisher, &Api::ListDeliveries, Body::kNone},
    Route{"GET", "/v1/deliveries/{}", Role::kPublisher, &Api::GetDelivery, Body::kNone},
    Route{"GET", "/v1/deliveries/{}/attempts", Role::kPublisher, &Api::ListAttempts, Body::kNone},
    Route{"GET", "/v1/admin/dead-letters", Role::kAdmin, &Api::ListDeadLetters, Body::kNone},
    Route{"POST", "/v1/admin/dead-letters/replay", Role::kAdmin, &Api::ReplayDeadLetters,
          Body::kOptional},
    Route{"GET", "/v1/admin/stats", Role::kAdmin, &Api::GetStats, Body::kNone},
    Route{"POST", "/v1/admin/dead-letters/{}/replay", Role::kAdmin, &Api::ReplayDeadLetter,
          Body::kOptional},
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

HttpServer::HttpServer(Store& store, Api* api, Authenticator* auth, Options options,
                       RequestObserver observer, MetricsSource metrics)
    : store_(store),
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
  // Without TCP_NODELAY every response waits ~40 ms on delayed ACKs (PERFORMANCE.md).
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
  const int threads = options_.threads;
  http.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };

  const auto observe = [this](std::string_view route, int status) {
    if (observer_) observer_(route, status);
  };

  const auto dispatch = [this, observe](const httplib::Request& req, httplib::Response& res) {
    const std::string& path = req.path;
    if (path == "/healthz") {
      Write(res, Reply{200, R"({"status":"ok"})", "application/json", {}});
      observe("/healthz", res.status);
      return;
    }
    if (path == "/readyz") {
      auto ready = store_.Ready();
      const bool ok = ready && *ready;
      if (!ready) Log(LogLevel::kWarn, "not ready", {{"error", ready.error().message}});
      Write(res, ok ? Reply{200, R"({"status":"ready"})", "application/json", {}}
                    : ProblemReply(503, ready ? "migrations are not applied"
                                              : "the database is unavailable"));
      observe("/readyz", res.status);
      return;
    }
    if (path == "/metrics" && metrics_) {
      if (req.method != "GET" && req.method != "HEAD") {
        Write(res, ProblemReply(405, "use GET"));
      } else {
        res.set_content(metrics_(), "text/plain; version=0.0.4; charset=utf-8");
      }
      observe("/metrics", res.status);
      return;
    }
    const Route* found = nullptr;
    std::vector<std::string> args;
    std::string allow;
    if (api_ != nullptr) {
      for (const Route& route : kRoutes) {
        if (!Match(route.pattern, path, &args)) continue;
        if (route.method == req.method || (req.method == "HEAD" && route.method == "GET")) {
          found = &route;
          break;
        }
        if (!allow.empty()) allow += ", ";
        allow += route.method;
      }
    }
    if (found == nullptr && options_.serve_ui && api_ != nullptr && ServeUi(req, res)) {
      observe("/ui", res.status);
      return;
    }
    if (found == nullptr) {
      Reply reply = allow.empty()
                        ? ProblemReply(404, "no route " + path)
                        : ProblemReply(405, req.method + " is not allowed here; use " + allow);
      if (!allow.empty()) reply.headers.emplace_back("Allow", allow);
      Write(res, reply);
      observe("unmatched", res.status);
      return;
    }
    // Re-match: `args` may hold a later pattern's segments after a method mismatch.
    Match(found->pattern, path, &args);
    Result<Reply> reply = [&]() -> Result<Reply> {
      if (auth_ == nullptr) return Fail(ErrorKind::kInternal, "no authenticator");
      const std::string authorization = req.get_header_value("Authorization");
      std::optional<std::string> deferred;
      if (found->defer_auth) {
        auto ok = auth_->CheckOrDefer(authorization, found->role);
        if (!ok) return std::unexpected(ok.error());
        deferred = std::move(*ok);
      } else if (auto ok = auth_->Check(authorization, found->role); !ok) {
        return std::unexpected(ok.error());
      }
      if (found->body == Body::kRequired || (found->body == Body::kOptional && !req.body.empty())) {
        if (!IsJsonContentType(req.get_header_value("Content-Type"))) {
          return std::unexpected(
              Error{ErrorKind::kMalformed, "Content-Type must be application/json", {}});
        }
      }
      ApiRequest api_req;
      api_req.path_args = std::move(args);
      api_req.query.insert(req.params.begin(), req.params.end());
      api_req.body = req.body;
      if (req.has_header("Idempotency-Key")) {
        api_req.idempotency_key = req.get_header_value("Idempotency-Key");
      }
      api_req.unverified_key_hash = deferred;
      Result<Reply> handled = (api_->*found->handler)(api_req);
      // A key revoked since it was seen gets its 401, not another answer, so an error
      // with a deferred key is answered only after a real lookup.
      if (!handled && deferred) {
        if (handled.error().kind == ErrorKind::kUnauthorized) auth_->Forget(*deferred);
        if (auto ok = auth_->Check(authorization, found->role); !ok) {
          return std::unexpected(ok.error());
        }
      }
      return handled;
    }();
    if (reply) {
      Write(res, *reply);
    } else {
      if (reply.error().kind == ErrorKind::kInternal ||
          reply.error().kind == ErrorKind::kUnavailable) {
        Log(LogLevel::kError, "request failed",
            {{"route", found->pattern}, {"method", req.method}, {"error", reply.error().message}});
      }
      Reply problem = ProblemReply(reply.error());
      if (reply.error().kind == ErrorKind::kMalformed &&
          reply.error().message.starts_with("Content-Type")) {
        problem = ProblemReply(415, reply.error().message);
      }
      Write(res, problem);
    }
    observe(found->pattern, res.status);
  };

  // RFC 9112 §6.3: a request with neither Content-Length nor Transfer-Encoding has no
  // body. httplib would read such a POST/PUT/PATCH to EOF instead, so `curl -X POST
  // .../replay` hung until the read timeout and then got a 400: serve it now, bodiless.
  http.set_pre_routing_handler([dispatch](const httplib::Request& req, httplib::Response& res) {
    if ((req.method == "POST" || req.method == "PUT" || req.method == "PATCH") &&
        !req.has_header("Content-Length") && !req.has_header("Transfer-Encoding")) {
      dispatch(req, res);
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
  http.set_error_handler(httplib::Server::HandlerWithResponse([this](const httplib::Request& req,
                                                                     httplib::Response& res) {
    if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
    // httplib answers 400 to a method it parses but has no handlers for (TRACE,
    // CONNECT): that is a wrong method (405) on a route, or an unknown route (404).
    if (res.status == 400 && (req.method == "TRACE" || req.method == "CONNECT")) {
      std::string allow;
      std::vector<std::string> args;
      for (const Route& route : kRoutes) {
        if (api_ == nullptr || !Match(route.pattern, req.path, &args)) continue;
        if (!allow.empty()) allow += ", ";
        allow += route.method;
      }
      Reply reply = allow.empty()
                        ? ProblemReply(404, "no route " + req.path)
                        : ProblemReply(405, req.method + " is not allowed here; use " + allow);
      if (!allow.empty()) reply.headers.emplace_back("Allow", allow);
      Write(res, reply);
      return httplib::Server::HandlerResponse::Handled;
    }
    const int status = res.status;
    Write(res,
          ProblemReply(status, status == 413 ? "the body is larger than WEBHOOKD_MAX_PAYLOAD_BYTES"
                                             : "the request could not be served"));
    return httplib::Server::HandlerResponse::Handled;
  }));
  http.set_exception_handler(
      [](const httplib::Request& req, httplib::Response& res, std::exception_ptr ep) {
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
