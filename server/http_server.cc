#include "server/http_server.h"

#include <algorithm>
#include <any>
#include <array>
#include <memory>
#include <optional>

#include "base/log.h"
#include "base/strings.h"
#include "console/assets.h"
#include "server/api.h"
#include "server/auth.h"
#include "server/openapi.h"
#include "server/problem.h"

namespace webhookd {

using Handler = Result<Reply> (Api::*)(const ApiRequest&);
using LaterHandler = bool (Api::*)(ApiRequest&, Api::Answer);

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
  // The route's handler for the listener's begin threads (HttpHandler::Begin), if any.
  LaterHandler later = nullptr;
  // At most HttpServer::kPerKeyLimit requests of the route per API key at once (the rest
  // 429): for a route whose cost the caller's input decides.
  bool limited_per_key = false;
  // No API key: the request carries its own credential, checked by the handler (an
  // inbound source's address, whose provider signs), and any body type.
  bool open = false;
  // The route's handler for a request that may wait once admitted (HttpHandler::
  // HandleLater: a feed read's long poll), if any.
  LaterHandler after_admit = nullptr;
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
    RouteSpec{"GET", "/v1/destinations/{}/stats", Role::kPublisher, kTenantOk,
              &Api::GetDestinationStats, Body::kNone},
    RouteSpec{"GET", "/v1/destinations/{}/secret", Role::kPublisher, kTenantOk,
              &Api::GetDestinationSecret, Body::kNone},
    RouteSpec{"POST", "/v1/destinations/{}/secret/rotate", Role::kPublisher, kTenantOk,
              &Api::RotateDestinationSecret, Body::kOptional},
    RouteSpec{"POST", "/v1/events", Role::kPublisher, kNotTenant, &Api::CreateEvent,
              Body::kRequired, true, &Api::CreateEventLater},
    RouteSpec{"GET", "/v1/destinations/{}/messages/counts", Role::kPublisher, kTenantOk,
              &Api::CountFeed, Body::kNone},
    RouteSpec{"GET", "/v1/destinations/{}/messages", Role::kPublisher, kTenantOk, &Api::ReadFeed,
              Body::kNone, false, nullptr, false, false, &Api::ReadFeedLater},
    RouteSpec{"POST", "/v1/destinations/{}/messages/ack", Role::kPublisher, kTenantOk,
              &Api::AckFeed, Body::kRequired},
    RouteSpec{"POST", "/v1/destinations/{}/messages/nack", Role::kPublisher, kTenantOk,
              &Api::NackFeed, Body::kRequired},
    RouteSpec{"GET", "/v1/events", Role::kPublisher, kTenantOk, &Api::ListEvents, Body::kNone},
    RouteSpec{"GET", "/v1/events/{}", Role::kPublisher, kTenantOk, &Api::GetEvent, Body::kNone},
    RouteSpec{"POST", "/v1/subjects/erase", Role::kPublisher, kTenantOk, &Api::EraseSubject,
              Body::kRequired},
    RouteSpec{"GET", "/v1/erasures/{}", Role::kPublisher, kTenantOk, &Api::GetErasure, Body::kNone},
    RouteSpec{"GET", "/v1/deliveries", Role::kPublisher, kTenantOk, &Api::ListDeliveries,
              Body::kNone},
    RouteSpec{"GET", "/v1/deliveries/{}", Role::kPublisher, kTenantOk, &Api::GetDelivery,
              Body::kNone},
    RouteSpec{"GET", "/v1/deliveries/{}/attempts", Role::kPublisher, kTenantOk, &Api::ListAttempts,
              Body::kNone},
    RouteSpec{"GET", "/v1/event-types", Role::kPublisher, kTenantOk, &Api::ListEventTypes,
              Body::kNone},
    RouteSpec{"POST", "/v1/event-types", Role::kPublisher, kNotTenant, &Api::CreateEventType,
              Body::kRequired},
    RouteSpec{"GET", "/v1/event-types/{}", Role::kPublisher, kTenantOk, &Api::GetEventType,
              Body::kNone},
    RouteSpec{"PATCH", "/v1/event-types/{}", Role::kPublisher, kNotTenant, &Api::UpdateEventType,
              Body::kRequired},
    RouteSpec{"DELETE", "/v1/event-types/{}", Role::kPublisher, kNotTenant, &Api::DeleteEventType,
              Body::kNone},
    RouteSpec{"POST", "/v1/filters/test", Role::kPublisher, kTenantOk, &Api::TestFilter,
              Body::kRequired, false, nullptr, true},
    RouteSpec{"GET", "/v1/admin/dead-letters", Role::kAdmin, kTenantOk, &Api::ListDeadLetters,
              Body::kNone},
    RouteSpec{"POST", "/v1/admin/dead-letters/replay", Role::kAdmin, kTenantOk,
              &Api::ReplayDeadLetters, Body::kOptional},
    RouteSpec{"GET", "/v1/admin/stats", Role::kAdmin, kNotTenant, &Api::GetStats, Body::kNone},
    RouteSpec{"GET", "/v1/admin/stats/series", Role::kAdmin, kNotTenant, &Api::GetStatsSeries,
              Body::kNone},
    RouteSpec{"GET", "/v1/admin/stats/failing", Role::kAdmin, kNotTenant,
              &Api::GetFailingDestinations, Body::kNone},
    RouteSpec{"POST", "/v1/admin/dead-letters/{}/replay", Role::kAdmin, kTenantOk,
              &Api::ReplayDeadLetter, Body::kOptional},
    RouteSpec{"POST", "/v1/admin/dead-letters/{}/dismiss", Role::kAdmin, kTenantOk,
              &Api::DismissDeadLetter, Body::kOptional},
    // A recovery replays dead letters: who may replay them (an admin, or a tenant's key
    // for its own destinations), not a publisher.
    RouteSpec{"POST", "/v1/destinations/{}/recover", Role::kAdmin, kTenantOk,
              &Api::RecoverDestination, Body::kRequired},
    RouteSpec{"GET", "/v1/recoveries/{}", Role::kAdmin, kTenantOk, &Api::GetRecovery, Body::kNone},
    RouteSpec{"POST", "/v1/sources", Role::kPublisher, kTenantOk, &Api::CreateSource,
              Body::kRequired},
    RouteSpec{"GET", "/v1/sources", Role::kPublisher, kTenantOk, &Api::ListSources, Body::kNone},
    RouteSpec{"GET", "/v1/sources/{}", Role::kPublisher, kTenantOk, &Api::GetSource, Body::kNone},
    RouteSpec{"PATCH", "/v1/sources/{}", Role::kPublisher, kTenantOk, &Api::UpdateSource,
              Body::kRequired},
    RouteSpec{"DELETE", "/v1/sources/{}", Role::kPublisher, kTenantOk, &Api::DeleteSource,
              Body::kNone},
    RouteSpec{"POST", "/v1/sources/{}/secret/rotate", Role::kPublisher, kTenantOk,
              &Api::RotateSourceSecret, Body::kRequired},
    RouteSpec{"GET", "/v1/sources/{}/requests", Role::kPublisher, kTenantOk,
              &Api::ListSourceRequests, Body::kNone},
    RouteSpec{"POST", "/in/{}", Role::kPublisher, kNotTenant, &Api::ReceiveInbound, Body::kOptional,
              false, nullptr, false, /*open=*/true},
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
  return EqualsIgnoreCase(Trim(value.substr(0, value.find(';'))), "application/json");
}

// The page may run only its own scripts and styles and talk only to this origin, so an
// API string that slipped into markup could still not run or send anything anywhere.
constexpr const char* kUiContentSecurityPolicy =
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

// The console under /ui/ (the path is /ui or under /ui/).
Reply ServeUi(const HttpRequest& req) {
  Reply reply;
  if (req.method != "GET" && req.method != "HEAD") {
    reply = ProblemReply(405, req.method + " is not allowed here; use GET");
    reply.headers.emplace_back("Allow", "GET, HEAD");
  } else if (req.path == "/ui") {
    reply = Reply{301, "", "", {{"Location", "/ui/"}}};
  } else {
    std::string_view file = std::string_view(req.path).substr(4);
    if (file.empty()) file = "index.html";
    if (const Asset* asset = FindUiAsset(file)) {
      reply = Reply{200,
                    std::string(asset->bytes.data(), asset->bytes.size()),
                    std::string(asset->content_type),
                    {}};
    } else {
      reply = ProblemReply(404, "no console file " + req.path);
    }
  }
  // On every answer, a 404 included: the headers protect whatever a browser renders.
  reply.headers.insert(reply.headers.end(), {{"Content-Security-Policy", kUiContentSecurityPolicy},
                                             {"X-Content-Type-Options", "nosniff"},
                                             {"Referrer-Policy", "no-referrer"},
                                             {"X-Frame-Options", "DENY"},
                                             {"Cache-Control", "no-cache"}});
  return reply;
}

// Requests taken by Begin and not yet answered: past this many, ingest waits on handler
// threads again, so a burst cannot queue without bound at the store.
constexpr int kMaxLater = 1024;

// Failed authentications one client address may make in a burst, then per minute: far
// above what a client with a real key meets, far below a flood of guessed keys.
constexpr int kAuthFailuresPerMinute = 600;

// What admitting a routed request found out, for handling it once its body is here.
struct Admitted {
  const RouteSpec* route = nullptr;
  std::vector<std::string> args;
  std::optional<Scope> scope;           // set by every successful check
  std::optional<std::string> deferred;  // a key hash checked inside the route's transaction
  // The key's place on a route limited per key, held until the request is answered
  // (shared: std::any holds copyable values only).
  std::shared_ptr<KeyConcurrency::Slot> slot;
};

// The Api's view of an admitted request, with `body` (moved or copied by the caller).
ApiRequest ApiRequestOf(Admitted& admitted, const HttpRequest& req, std::string body) {
  ApiRequest api_req(std::move(*admitted.scope));
  if (admitted.route->open) {
    for (const auto& [name, value] : req.headers) api_req.headers.Add(name, value);
    api_req.raw_query = req.query;
  }
  api_req.path_args = std::move(admitted.args);
  api_req.query.insert(req.params.begin(), req.params.end());
  api_req.body = std::move(body);
  if (req.HasHeader("Idempotency-Key")) api_req.idempotency_key = req.Header("Idempotency-Key");
  api_req.traceparent = req.Header("traceparent");
  api_req.tracestate = req.Header("tracestate");
  api_req.unverified_key_hash = admitted.deferred;
  api_req.arrived = req.arrived;
  return api_req;
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
      auth_failures_(clock_, kAuthFailuresPerMinute) {
  HttpListener::Options limits;
  limits.max_body_bytes = options_.max_payload_bytes;
  limits.handler_threads = options_.threads;
  limits.max_connections = options_.max_connections;
  limits.max_connections_per_client = options_.max_connections_per_client;
  // The operations port of a worker serves a few scrapes: one socket thread is plenty,
  // and it has no Begin to run.
  limits.io_threads = api_ != nullptr ? 2 : 1;
  limits.begin_threads = api_ != nullptr ? 2 : 1;
  listener_ = std::make_unique<HttpListener>(static_cast<HttpHandler&>(*this), limits);
}

HttpServer::~HttpServer() = default;

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

std::optional<Reply> HttpServer::Immediate(HttpRequest& req) {
  if (req.path == "/healthz") {
    Observe("/healthz", 200);
    return Reply{200, R"({"status":"ok"})", "application/json", {}};
  }
  if (req.path == "/openapi.json" && api_ != nullptr) {
    Reply reply;
    if (req.method != "GET" && req.method != "HEAD") {
      reply = ProblemReply(405, req.method + " is not allowed here; use GET");
      reply.headers.emplace_back("Allow", "GET");
    } else {
      reply = Reply{200, std::string(OpenApiJson()), "application/json", {}};
    }
    Observe("/openapi.json", reply.status);
    return reply;
  }
  // No API route is under /ui: the console's files are static.
  if (options_.serve_ui && api_ != nullptr && (req.path == "/ui" || req.path.starts_with("/ui/"))) {
    Reply reply = ServeUi(req);
    Observe("/ui", reply.status);
    return reply;
  }
  return std::nullopt;
}

Result<bool> HttpServer::Ready() {
  std::lock_guard lock(ready_mu_);
  const auto now = std::chrono::steady_clock::now();
  if (!ready_ || now - ready_at_ >= std::chrono::seconds(1)) {
    ready_ = operations_.Ready();
    ready_at_ = now;
  }
  return *ready_;
}

std::optional<Reply> HttpServer::ServeOperations(const HttpRequest& req) {
  if (req.path == "/readyz") {
    auto ready = Ready();
    const bool ok = ready && *ready;
    if (!ready) Log(LogLevel::kWarn, "not ready", {{"error", ready.error().message}});
    Reply reply = ok ? Reply{200, R"({"status":"ready"})", "application/json", {}}
                     : ProblemReply(503, ready ? "migrations are not applied"
                                               : "the database is unavailable");
    Observe("/readyz", reply.status);
    return reply;
  }
  if (req.path == "/metrics" && metrics_) {
    Reply reply = req.method != "GET" && req.method != "HEAD"
                      ? ProblemReply(405, "use GET")
                      : Reply{200, metrics_(), "text/plain; version=0.0.4; charset=utf-8", {}};
    Observe("/metrics", reply.status);
    return reply;
  }
  return std::nullopt;
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
Reply HttpServer::Unrouted(const HttpRequest& req, const std::string& allow) {
  Reply reply = allow.empty()
                    ? ProblemReply(404, "no route " + req.path)
                    : ProblemReply(405, req.method + " is not allowed here; use " + allow);
  if (!allow.empty()) reply.headers.emplace_back("Allow", allow);
  return reply;
}

std::optional<Reply> HttpServer::Admit(HttpRequest& req) {
  if (auto reply = ServeOperations(req)) return reply;
  std::vector<std::string> args;
  std::string allow;
  const Route* route = FindRoute(req.method, req.path, &args, &allow);
  if (route == nullptr) {
    Reply reply = Unrouted(req, allow);
    Observe("unmatched", reply.status);
    return reply;
  }
  std::optional<Reply> refused = AdmitRoute(*route, req, std::move(args));
  if (refused) Observe(route->pattern, refused->status);
  return refused;
}

std::optional<Reply> HttpServer::AdmitRoute(const Route& route, HttpRequest& req,
                                            std::vector<std::string> args) {
  if (route.open) {
    // Whatever its type, the body is the sender's own bytes; only a compressed one is
    // refused, as everywhere (CheckContent).
    if (auto refused = CheckContent(route, req)) return refused;
    req.context = Admitted{&route, std::move(args), Scope::All(), std::nullopt, nullptr};
    return std::nullopt;
  }
  if (auth_ == nullptr) return ProblemReply(Error{ErrorKind::kInternal, "no authenticator", {}});
  const std::string authorization = req.Header("Authorization");
  // An address over its limit of failed authentications is refused before its key is
  // looked up, unless the key is one seen live lately (no lookup needed): a client behind
  // the same proxy or NAT as a flood of made-up keys keeps working.
  if (const int wait = auth_failures_.RetryAfter(req.remote);
      wait > 0 && !auth_->RecentlyLive(authorization)) {
    Reply reply = ProblemReply(429, "too many failed authentications from this address");
    reply.headers.emplace_back("Retry-After", std::to_string(wait));
    return reply;
  }
  const Access access{route.role, route.tenant_ok};
  // A key that was live a minute ago (revoked since, say) is no guess: only the others
  // count against the address.
  const auto refused = [&](const Error& error) {
    if (error.kind == ErrorKind::kUnauthorized && !auth_->RecentlyLive(authorization)) {
      auth_failures_.Failed(req.remote);
    }
    return ProblemReply(error);
  };
  Admitted admitted;
  admitted.route = &route;
  admitted.args = std::move(args);
  if (route.limited_per_key) {
    // Before the key is looked up, so that a key's extra requests cost no database work.
    // The key's hash names it as its id does (one row each); a header without a key
    // takes no place and is answered 401 below.
    if (auto key = Authenticator::KeyHashOf(authorization)) {
      auto slot = per_key_.TryAcquire(std::string(route.pattern) + " " + *key);
      if (!slot) {
        Reply reply = ProblemReply(429, "this API key has " + std::to_string(kPerKeyLimit) +
                                            " requests of this route in progress already; "
                                            "retry when one has been answered");
        reply.headers.emplace_back("Retry-After", "1");
        return reply;
      }
      admitted.slot = std::make_shared<KeyConcurrency::Slot>(std::move(*slot));
    }
  }
  if (route.defer_auth) {
    auto ok = auth_->CheckOrDefer(authorization, access);
    if (!ok) return refused(ok.error());
    admitted.scope = std::move(ok->scope);
    admitted.deferred = std::move(ok->key_hash);
  } else {
    auto scope = auth_->Check(authorization, access);
    if (!scope) return refused(scope.error());
    admitted.scope = std::move(*scope);
  }
  if (auto refused = CheckContent(route, req)) return refused;
  req.context = std::move(admitted);
  return std::nullopt;
}

std::optional<Reply> HttpServer::CheckContent(const Route& route, const HttpRequest& req) {
  if (!route.open &&
      (route.body == Body::kRequired || (route.body == Body::kOptional && req.has_body))) {
    if (!IsJsonContentType(req.Header("Content-Type"))) {
      return ProblemReply(
          Error{ErrorKind::kUnsupportedMediaType, "Content-Type must be application/json", {}});
    }
  }
  // A compressed body is never inflated: what is buffered is what arrived, within the
  // limit, and the bytes delivered are the bytes posted.
  if (const std::string encoding = Lower(Trim(req.Header("Content-Encoding")));
      !encoding.empty() && encoding != "identity") {
    return ProblemReply(Error{ErrorKind::kUnsupportedMediaType,
                              "Content-Encoding is not supported; send the body uncompressed",
                              {}});
  }
  return std::nullopt;
}

Reply HttpServer::Handle(HttpRequest& req) {
  auto& admitted = std::any_cast<Admitted&>(req.context);
  const Route& route = *admitted.route;
  Reply reply = Answer(route, req.method, Call(route, req));
  admitted.slot.reset();  // the key's place frees once the work is done
  return reply;
}

Reply HttpServer::Answer(const Route& route, const std::string& method, Result<Reply> reply) {
  Reply answer;
  if (reply) {
    answer = std::move(*reply);
  } else {
    if (reply.error().kind == ErrorKind::kInternal ||
        reply.error().kind == ErrorKind::kUnavailable) {
      Log(LogLevel::kError, "request failed",
          {{"route", route.pattern}, {"method", method}, {"error", reply.error().message}});
    }
    answer = ProblemReply(reply.error());
  }
  Observe(route.pattern, answer.status);
  return answer;
}

bool HttpServer::Begin(const HttpRequest& req, Later later) {
  if (api_ == nullptr || auth_ == nullptr) return false;
  std::vector<std::string> args;
  std::string allow;
  const Route* route = FindRoute(req.method, req.path, &args, &allow);
  if (route == nullptr || route->later == nullptr) return false;
  // Only a key seen live lately is admitted here (no lookup, and no failed
  // authentication to count); any other takes AdmitRoute's way.
  auto deferred = auth_->DeferIfSeen(req.Header("Authorization"), {route->role, route->tenant_ok});
  if (!deferred) return false;
  if (auto refused = CheckContent(*route, req)) {
    Observe(route->pattern, refused->status);
    later(std::move(*refused));
    return true;
  }
  if (later_.fetch_add(1) >= kMaxLater) {
    --later_;
    return false;
  }
  // Ingest is not limited per key: no slot.
  Admitted admitted{route, std::move(args), std::move(deferred->scope),
                    std::move(deferred->key_hash), nullptr};
  ApiRequest api_req = ApiRequestOf(admitted, req, req.body);
  // A key revoked since it was seen is refused by the store: that request, and one the
  // store found checked against an old catalog, go the usual way (a real lookup, a
  // fresh check) with nothing written.
  Api::Answer answer = [this, route, method = req.method, hash = admitted.deferred,
                        later](std::optional<Result<Reply>> reply) {
    --later_;
    if (reply && !*reply && reply->error().kind == ErrorKind::kUnauthorized && hash) {
      auth_->Forget(*hash);
      reply.reset();
    }
    if (!reply) return later(std::nullopt);
    later(Answer(*route, method, std::move(*reply)));
  };
  if ((api_->*route->later)(api_req, std::move(answer))) return true;
  --later_;
  return false;
}

bool HttpServer::HandleLater(HttpRequest& req, Later later) {
  auto* admitted = std::any_cast<Admitted>(&req.context);
  if (api_ == nullptr || admitted == nullptr || admitted->route->after_admit == nullptr) {
    return false;
  }
  const Route* route = admitted->route;
  // A copy: the request may be offered again (handed back after a wake-up), and Handle
  // may still need the admission.
  Admitted again = *admitted;
  ApiRequest api_req = ApiRequestOf(again, req, req.body);
  Api::Answer answer = [this, route, method = req.method,
                        later = std::move(later)](std::optional<Result<Reply>> reply) {
    if (!reply) return later(std::nullopt);
    later(Answer(*route, method, std::move(*reply)));
  };
  return (api_->*route->after_admit)(api_req, std::move(answer));
}

Result<Reply> HttpServer::Call(const Route& route, HttpRequest& req) {
  auto& admitted = std::any_cast<Admitted&>(req.context);
  ApiRequest api_req = ApiRequestOf(admitted, req, std::move(req.body));
  Result<Reply> handled = (api_->*route.handler)(api_req);
  // A key revoked since it was seen gets its 401, not another answer, so an error
  // with a deferred key is answered only after a real lookup.
  if (!handled && admitted.deferred) {
    if (handled.error().kind == ErrorKind::kUnauthorized) auth_->Forget(*admitted.deferred);
    const Access access{route.role, route.tenant_ok};
    if (auto ok = auth_->Check(req.Header("Authorization"), access); !ok) return Propagate(ok);
  }
  return handled;
}

Reply HttpServer::Refused(int status) {
  Reply reply = status == 413
                    ? ProblemReply(413, "the body is larger than WEBHOOKD_MAX_PAYLOAD_BYTES")
                : status == 431
                    ? ProblemReply(431, "the header section is over 64 KiB or has over 100 fields")
                    : ProblemReply(status, "the request is not valid HTTP/1.1");
  Observe("refused", reply.status);
  return reply;
}

Result<int> HttpServer::Bind() { return listener_->Bind(options_.addr.host, options_.addr.port); }

void HttpServer::Run() { listener_->Run(); }

void HttpServer::Stop() {
  listener_->Stop();
  // Requests waiting for an event are answered now, so the listener's end is not delayed.
  if (api_ != nullptr) api_->StopWaiting();
}

}  // namespace webhookd
