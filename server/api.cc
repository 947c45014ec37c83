#include "server/api.h"

#include <charconv>

#include "base/duration.h"
#include "base/encoding.h"
#include "base/log.h"
#include "core/api_key.h"
#include "core/ids.h"
#include "core/signing.h"
#include "core/validation.h"
#include "net/url.h"
#include "server/json_codec.h"

namespace webhookd {
namespace {

constexpr int kMaxLimit = 1000;
constexpr int kDefaultLimit = 50;
constexpr Duration kDefaultPortalLinkTtl = std::chrono::hours(1);
constexpr Duration kMaxPortalLinkTtl = std::chrono::hours(24 * 7);

Reply JsonReply(int status, const Json& body) {
  return Reply{status, Dump(body), "application/json", {}};
}

std::optional<std::string> QueryValue(const ApiRequest& req, const std::string& name) {
  auto it = req.query.find(name);
  if (it == req.query.end()) return std::nullopt;
  return it->second;
}

// ?limit=, 1 to 1000; kDefaultLimit when absent.
int ParseLimit(const ApiRequest& req, std::vector<FieldError>& errors) {
  auto limit = QueryValue(req, "limit");
  if (!limit) return kDefaultLimit;
  int value = 0;
  const auto [end, ec] = std::from_chars(limit->data(), limit->data() + limit->size(), value);
  if (ec != std::errc() || end != limit->data() + limit->size() || value < 1 || value > kMaxLimit) {
    errors.push_back({"limit", "must be an integer from 1 to 1000"});
    return kDefaultLimit;
  }
  return value;
}

// limit and cursor; the cursor is the id of the last item of the previous page.
Result<Page> ParsePage(const ApiRequest& req, std::string_view prefix) {
  Page page;
  std::vector<FieldError> errors;
  page.limit = ParseLimit(req, errors);
  if (auto cursor = QueryValue(req, "cursor"); cursor && !cursor->empty()) {
    page.before_id = ParseId(prefix, *cursor);
    if (!page.before_id) errors.push_back({"cursor", "is not a cursor from this list"});
  }
  if (!errors.empty()) return Invalid(std::move(errors));
  return page;
}

template <typename T, typename F>
Reply ListReply(const Listing<T>& listing, std::string_view prefix, F&& to_json) {
  Json data = Json::array();
  for (const T& item : listing.items) data.push_back(to_json(item));
  Json body = {{"data", std::move(data)}, {"next_cursor", nullptr}};
  if (listing.next_before_id) body["next_cursor"] = FormatId(prefix, *listing.next_before_id);
  return JsonReply(200, body);
}

Result<int64_t> PathId(const ApiRequest& req, std::string_view prefix, std::string_view what) {
  auto id = req.path_args.empty() ? std::nullopt : ParseId(prefix, req.path_args[0]);
  if (!id) return Fail(ErrorKind::kNotFound, "no " + std::string(what) + " with that id");
  return *id;
}

// A filter id in the query string: absent, or well-formed.
Result<std::optional<int64_t>> QueryId(const ApiRequest& req, const std::string& name,
                                       std::string_view prefix) {
  auto text = QueryValue(req, name);
  if (!text || text->empty()) return std::optional<int64_t>();
  auto id = ParseId(prefix, *text);
  if (!id) return Invalid({{name, "is not a valid id"}});
  return std::optional<int64_t>(*id);
}

// ?tenant_id=: absent, or a valid tenant id.
Result<std::optional<std::string>> QueryTenant(const ApiRequest& req) {
  auto text = QueryValue(req, "tenant_id");
  if (!text || text->empty()) return std::optional<std::string>();
  if (!IsValidTenantId(*text)) return Invalid({{"tenant_id", kTenantIdRule}});
  return text;
}

Result<std::optional<Timestamp>> QueryTime(const ApiRequest& req, const std::string& name) {
  auto text = QueryValue(req, name);
  if (!text || text->empty()) return std::optional<Timestamp>();
  auto t = ParseRfc3339(*text);
  if (!t) return Invalid({{name, "must be an RFC 3339 time such as 2026-01-02T03:04:05Z"}});
  return std::optional<Timestamp>(*t);
}

}  // namespace

Api::Api(ApiStores stores, Resolver& resolver, const Config& config, Metrics* metrics)
    : stores_(stores), resolver_(resolver), config_(config), metrics_(metrics) {}

Result<void> Api::CheckDestinationUrl(const std::string& text) {
  if (config_.allow_private_destinations) return {};
  auto url = ParseUrl(text);
  if (!url) return Invalid({{"url", url.error().message}});
  auto vetted = VetHost(url->host, resolver_, /*allow_private=*/false);
  if (!vetted) return Invalid({{"url", vetted.error().message}});
  return {};
}

Result<Reply> Api::CreateDestination(const ApiRequest& req) {
  auto body = ParseJsonBody(req.body);
  if (!body) return std::unexpected(body.error());
  auto fields = ParseDestinationFields(*body, /*creating=*/true);
  if (!fields) return std::unexpected(fields.error());
  if (auto ok = CheckDestinationUrl(*fields->url); !ok) return std::unexpected(ok.error());
  Destination d;
  // A tenant key makes its own tenant's destinations, whatever the body says.
  d.tenant_id =
      req.scope.tenant_id ? req.scope.tenant_id : fields->tenant_id.value_or(std::nullopt);
  d.url = *fields->url;
  d.description = fields->description.value_or("");
  d.event_types = fields->event_types.value_or(std::vector<std::string>{});
  d.secret = fields->secret.value_or(GenerateSecret());
  d.headers = fields->headers.value_or(Headers{});
  d.enabled = fields->enabled.value_or(true);
  d.max_in_flight = fields->max_in_flight.value_or(std::nullopt);
  d.rate_limit = fields->rate_limit.value_or(std::nullopt);
  auto created = stores_.destinations.CreateDestination(d);
  if (!created) return std::unexpected(created.error());
  return JsonReply(201, DestinationJson(*created, config_.destination_max_in_flight, true));
}

Result<Reply> Api::GetDestination(const ApiRequest& req) {
  auto id = PathId(req, kDestinationPrefix, "destination");
  if (!id) return std::unexpected(id.error());
  auto d = stores_.destinations.GetDestination(*id, req.scope);
  if (!d) return std::unexpected(d.error());
  return JsonReply(200, DestinationJson(*d, config_.destination_max_in_flight, false));
}

Result<Reply> Api::ListDestinations(const ApiRequest& req) {
  auto page = ParsePage(req, kDestinationPrefix);
  if (!page) return std::unexpected(page.error());
  auto tenant = QueryTenant(req);
  if (!tenant) return std::unexpected(tenant.error());
  auto listing =
      stores_.destinations.ListDestinations(DestinationFilter{*tenant}, *page, req.scope);
  if (!listing) return std::unexpected(listing.error());
  return ListReply(*listing, kDestinationPrefix, [&](const Destination& d) {
    return DestinationJson(d, config_.destination_max_in_flight, false);
  });
}

Result<Reply> Api::GetDestinationSecret(const ApiRequest& req) {
  auto id = PathId(req, kDestinationPrefix, "destination");
  if (!id) return std::unexpected(id.error());
  auto d = stores_.destinations.GetDestination(*id, req.scope);
  if (!d) return std::unexpected(d.error());
  return JsonReply(200, Json{{"secret", d->secret}});
}

Result<Reply> Api::RotateDestinationSecret(const ApiRequest& req) {
  auto id = PathId(req, kDestinationPrefix, "destination");
  if (!id) return std::unexpected(id.error());
  std::string secret;
  Duration grace = config_.secret_grace;
  if (!req.body.empty()) {
    auto body = ParseJsonBody(req.body);
    if (!body) return std::unexpected(body.error());
    if (!body->is_object()) return Invalid({{"body", "must be a JSON object"}});
    std::vector<FieldError> errors;
    if (auto it = body->find("secret"); it != body->end() && !it->is_null()) {
      if (!it->is_string() || !DecodeSecret(it->get_ref<const std::string&>())) {
        errors.push_back({"secret", "must be whsec_ followed by base64 of 24 to 64 bytes"});
      } else {
        secret = it->get<std::string>();
      }
    }
    if (auto it = body->find("grace_period"); it != body->end() && !it->is_null()) {
      auto parsed = it->is_string() ? (it->get_ref<const std::string&>() == "0"
                                           ? Result<Duration>(Duration::zero())
                                           : ParseDuration(it->get_ref<const std::string&>()))
                                    : Result<Duration>(std::unexpected(Error{}));
      if (!parsed || *parsed > kMaxSecretGrace) {
        errors.push_back({"grace_period", "must be 0 or a duration up to 7d, such as 24h"});
      } else {
        grace = *parsed;
      }
    }
    if (!errors.empty()) return Invalid(std::move(errors));
  }
  if (secret.empty()) secret = GenerateSecret();
  auto until = stores_.destinations.RotateSecret(*id, secret, grace, req.scope);
  if (!until) return std::unexpected(until.error());
  return JsonReply(200, Json{{"secret", secret}, {"previous_valid_until", FormatRfc3339(*until)}});
}

Result<Reply> Api::UpdateDestination(const ApiRequest& req) {
  auto id = PathId(req, kDestinationPrefix, "destination");
  if (!id) return std::unexpected(id.error());
  auto body = ParseJsonBody(req.body);
  if (!body) return std::unexpected(body.error());
  auto fields = ParseDestinationFields(*body, /*creating=*/false);
  if (!fields) return std::unexpected(fields.error());
  if (fields->url) {
    if (auto ok = CheckDestinationUrl(*fields->url); !ok) return std::unexpected(ok.error());
  }
  auto d = stores_.destinations.UpdateDestination(*id, *fields, req.scope);
  if (!d) return std::unexpected(d.error());
  return JsonReply(200, DestinationJson(*d, config_.destination_max_in_flight, false));
}

Result<Reply> Api::DeleteDestination(const ApiRequest& req) {
  auto id = PathId(req, kDestinationPrefix, "destination");
  if (!id) return std::unexpected(id.error());
  if (auto ok = stores_.destinations.DeleteDestination(*id, req.scope); !ok)
    return std::unexpected(ok.error());
  return Reply{204, "", "", {}};
}

Result<Reply> Api::CreateEvent(const ApiRequest& req) {
  std::optional<IdempotencyKey> key;
  if (req.idempotency_key) {
    if (!IsValidIdempotencyKey(*req.idempotency_key)) {
      return Invalid({{"Idempotency-Key", "must be 1-255 visible ASCII characters"}});
    }
    key = IdempotencyKey{*req.idempotency_key, HexEncode(Sha256(req.body))};
  }
  auto event = ParseNewEvent(req.body);
  if (!event) return std::unexpected(event.error());
  if (req.unverified_key_hash) event->verify_key_hash = *req.unverified_key_hash;
  auto receipt = stores_.events.InsertEvent(*event, key);
  if (!receipt) return std::unexpected(receipt.error());
  Reply reply = JsonReply(202, ReceiptJson(receipt->event));
  if (receipt->replayed) {
    reply.headers.emplace_back("Idempotent-Replayed", "true");
  } else if (metrics_ != nullptr) {
    metrics_->events_ingested.Inc();
    metrics_->deliveries_created.Inc(receipt->event.deliveries.size());
  }
  return reply;
}

Result<Reply> Api::GetEvent(const ApiRequest& req) {
  auto id = PathId(req, kEventPrefix, "event");
  if (!id) return std::unexpected(id.error());
  auto event = stores_.events.GetEvent(*id, req.scope);
  if (!event) return std::unexpected(event.error());
  return Reply{200, EventText(*event, /*with_deliveries=*/true), "application/json", {}};
}

Result<Reply> Api::ListEvents(const ApiRequest& req) {
  auto page = ParsePage(req, kEventPrefix);
  if (!page) return std::unexpected(page.error());
  EventFilter filter;
  if (auto type = QueryValue(req, "type"); type && !type->empty()) {
    if (!IsValidEventType(*type)) return Invalid({{"type", "is not a valid event type"}});
    filter.type = *type;
  }
  auto after = QueryTime(req, "after");
  if (!after) return std::unexpected(after.error());
  auto before = QueryTime(req, "before");
  if (!before) return std::unexpected(before.error());
  filter.after = *after;
  filter.before = *before;
  auto tenant = QueryTenant(req);
  if (!tenant) return std::unexpected(tenant.error());
  filter.tenant_id = *tenant;
  auto listing = stores_.events.ListEvents(filter, *page, req.scope);
  if (!listing) return std::unexpected(listing.error());
  // Written as text: each payload goes in as its stored bytes (EventText).
  std::string body = R"({"data":[)";
  for (size_t i = 0; i < listing->items.size(); ++i) {
    if (i > 0) body += ',';
    body += EventText(listing->items[i], /*with_deliveries=*/false);
  }
  body += R"(],"next_cursor":)";
  body += listing->next_before_id ? Dump(Json(FormatId(kEventPrefix, *listing->next_before_id)))
                                  : std::string("null");
  body += '}';
  return Reply{200, std::move(body), "application/json", {}};
}

Result<Reply> Api::GetDelivery(const ApiRequest& req) {
  auto id = PathId(req, kDeliveryPrefix, "delivery");
  if (!id) return std::unexpected(id.error());
  auto d = stores_.deliveries.GetDelivery(*id, req.scope);
  if (!d) return std::unexpected(d.error());
  return JsonReply(200, DeliveryJson(*d));
}

Result<Reply> Api::ListDeliveries(const ApiRequest& req) {
  auto page = ParsePage(req, kDeliveryPrefix);
  if (!page) return std::unexpected(page.error());
  DeliveryFilter filter;
  auto destination = QueryId(req, "destination_id", kDestinationPrefix);
  if (!destination) return std::unexpected(destination.error());
  filter.destination_id = *destination;
  if (auto status = QueryValue(req, "status"); status && !status->empty()) {
    filter.status = ParseDeliveryStatus(*status);
    if (!filter.status) {
      return Invalid(
          {{"status", "must be pending, in_flight, succeeded, dead_lettered or cancelled"}});
    }
  }
  auto tenant = QueryTenant(req);
  if (!tenant) return std::unexpected(tenant.error());
  filter.tenant_id = *tenant;
  auto listing = stores_.deliveries.ListDeliveries(filter, *page, req.scope);
  if (!listing) return std::unexpected(listing.error());
  return ListReply(*listing, kDeliveryPrefix, DeliveryJson);
}

Result<Reply> Api::ListAttempts(const ApiRequest& req) {
  auto id = PathId(req, kDeliveryPrefix, "delivery");
  if (!id) return std::unexpected(id.error());
  auto attempts = stores_.deliveries.ListAttempts(*id, req.scope);
  if (!attempts) return std::unexpected(attempts.error());
  Json data = Json::array();
  for (const Attempt& a : *attempts) data.push_back(AttemptJson(a));
  return JsonReply(200, Json{{"data", std::move(data)}, {"next_cursor", nullptr}});
}

namespace {

Result<DeadLetterFilter> DeadLetterFilterFrom(const ApiRequest& req) {
  DeadLetterFilter filter;
  auto destination = QueryId(req, "destination_id", kDestinationPrefix);
  if (!destination) return std::unexpected(destination.error());
  filter.destination_id = *destination;
  if (auto reason = QueryValue(req, "reason"); reason && !reason->empty()) {
    filter.reason = ParseDeadLetterReason(*reason);
    if (!filter.reason) return Invalid({{"reason", "must be exhausted or permanent_failure"}});
  }
  auto since = QueryTime(req, "since");
  if (!since) return std::unexpected(since.error());
  auto until = QueryTime(req, "until");
  if (!until) return std::unexpected(until.error());
  filter.since = *since;
  filter.until = *until;
  auto tenant = QueryTenant(req);
  if (!tenant) return std::unexpected(tenant.error());
  filter.tenant_id = *tenant;
  return filter;
}

}  // namespace

Result<Reply> Api::ListDeadLetters(const ApiRequest& req) {
  auto page = ParsePage(req, kDeadLetterPrefix);
  if (!page) return std::unexpected(page.error());
  auto filter = DeadLetterFilterFrom(req);
  if (!filter) return std::unexpected(filter.error());
  auto listing = stores_.dead_letters.ListDeadLetters(*filter, *page, req.scope);
  if (!listing) return std::unexpected(listing.error());
  return ListReply(*listing, kDeadLetterPrefix, DeadLetterJson);
}

Result<Reply> Api::ReplayDeadLetter(const ApiRequest& req) {
  auto id = PathId(req, kDeadLetterPrefix, "dead letter");
  if (!id) return std::unexpected(id.error());
  auto delivery = stores_.dead_letters.ReplayDeadLetter(*id, req.scope);
  if (!delivery) return std::unexpected(delivery.error());
  if (metrics_ != nullptr) metrics_->replays.Inc();
  Log(LogLevel::kInfo, "replayed a dead letter",
      {{"dead_letter_id", req.path_args[0]},
       {"delivery_id", FormatId(kDeliveryPrefix, *delivery)}});
  return JsonReply(202, Json{{"delivery_id", FormatId(kDeliveryPrefix, *delivery)}});
}

Result<Reply> Api::ReplayDeadLetters(const ApiRequest& req) {
  // The filter comes in the body here, with the same names as the list's query.
  ApiRequest as_query(req.scope);
  if (!req.body.empty()) {
    auto body = ParseJsonBody(req.body);
    if (!body) return std::unexpected(body.error());
    if (!body->is_object()) return Invalid({{"body", "must be a JSON object"}});
    std::vector<FieldError> errors;
    for (const char* name : {"destination_id", "since", "until", "reason", "tenant_id"}) {
      auto it = body->find(name);
      if (it == body->end() || it->is_null()) continue;
      if (!it->is_string()) {
        errors.push_back({name, "must be a string"});
      } else {
        as_query.query.emplace(name, it->get<std::string>());
      }
    }
    if (!errors.empty()) return Invalid(std::move(errors));
  }
  auto filter = DeadLetterFilterFrom(as_query);
  if (!filter) return std::unexpected(filter.error());
  auto count = stores_.dead_letters.ReplayDeadLetters(*filter, req.scope);
  if (!count) return std::unexpected(count.error());
  if (metrics_ != nullptr) metrics_->replays.Inc(static_cast<uint64_t>(*count));
  Log(LogLevel::kInfo, "replayed dead letters in bulk", {{"count", *count}});
  return JsonReply(202, Json{{"replayed", *count}});
}

namespace {

// ?window= of the stats routes: a duration up to 31 days, 1h when absent.
Result<Duration> StatsWindow(const ApiRequest& req) {
  Duration window = std::chrono::hours(1);
  if (auto text = QueryValue(req, "window"); text && !text->empty()) {
    auto parsed = ParseDuration(*text);
    if (!parsed || *parsed <= Duration::zero() || *parsed > std::chrono::hours(24 * 31)) {
      return Invalid({{"window", "must be a duration such as 15m, 1h or 24h, at most 744h"}});
    }
    window = *parsed;
  }
  return window;
}

}  // namespace

Result<Reply> Api::GetStatsSeries(const ApiRequest& req) {
  constexpr int64_t kMaxPoints = 1440;
  auto window = StatsWindow(req);
  if (!window) return std::unexpected(window.error());
  Duration step = std::chrono::minutes(1);
  if (auto text = QueryValue(req, "step"); text && !text->empty()) {
    auto parsed = ParseDuration(*text);
    if (!parsed || *parsed < std::chrono::seconds(1)) {
      return Invalid({{"step", "must be a duration of at least 1s, such as 1m"}});
    }
    step = *parsed;
  }
  if (window->count() % step.count() != 0 || window->count() / step.count() > kMaxPoints) {
    return Invalid({{"step", "must divide the window into at most 1440 whole steps"}});
  }
  auto points = stores_.operations.StatsSeries(*window, step);
  if (!points) return std::unexpected(points.error());
  Json data = Json::array();
  for (const StatsPoint& p : *points) {
    data.push_back(Json{{"at", FormatRfc3339(p.at)},
                        {"attempts", p.attempts},
                        {"successes", p.successes},
                        {"failures", p.failures},
                        {"dead_letters", p.dead_letters}});
  }
  return JsonReply(200, Json{{"window", FormatDuration(*window)},
                             {"step", FormatDuration(step)},
                             {"points", std::move(data)}});
}

Result<Reply> Api::GetStats(const ApiRequest& req) {
  auto window = StatsWindow(req);
  if (!window) return std::unexpected(window.error());
  auto stats = stores_.operations.Stats(*window);
  if (!stats) return std::unexpected(stats.error());
  return JsonReply(200, Json{{"window", FormatDuration(*window)},
                             {"attempts", stats->attempts},
                             {"retry_rate", stats->retry_rate},
                             {"dead_letter_rate", stats->dead_letter_rate},
                             {"avg_attempts_to_success", stats->avg_attempts_to_success},
                             {"second_attempt_success_rate", stats->second_attempt_success_rate},
                             {"retrying_over_24h", stats->retrying_over_24h},
                             {"pending", stats->pending},
                             {"in_flight", stats->in_flight}});
}

Result<Reply> Api::ListTenants(const ApiRequest& req) {
  std::vector<FieldError> errors;
  TenantPage page;
  page.limit = ParseLimit(req, errors);
  // The cursor is the last tenant_id of the previous page: tenants have no other order.
  if (auto cursor = QueryValue(req, "cursor"); cursor && !cursor->empty()) {
    if (IsValidTenantId(*cursor)) {
      page.after_id = *cursor;
    } else {
      errors.push_back({"cursor", "is not a cursor from this list"});
    }
  }
  if (!errors.empty()) return Invalid(std::move(errors));
  auto listing = stores_.tenants.ListTenants(page);
  if (!listing) return std::unexpected(listing.error());
  Json data = Json::array();
  for (const TenantSummary& t : listing->items) data.push_back(TenantJson(t));
  return JsonReply(200, Json{{"data", std::move(data)},
                             {"next_cursor", listing->next_after_id ? Json(*listing->next_after_id)
                                                                    : Json(nullptr)}});
}

Result<Reply> Api::CreatePortalLink(const ApiRequest& req) {
  const std::string tenant = req.path_args.empty() ? "" : req.path_args[0];
  std::vector<FieldError> errors;
  if (!IsValidTenantId(tenant)) errors.push_back({"tenant_id", kTenantIdRule});
  Duration ttl = kDefaultPortalLinkTtl;
  if (!req.body.empty()) {
    auto body = ParseJsonBody(req.body);
    if (!body) return std::unexpected(body.error());
    if (!body->is_object()) return Invalid({{"body", "must be a JSON object"}});
    if (auto it = body->find("ttl"); it != body->end() && !it->is_null()) {
      auto parsed = it->is_string() ? ParseDuration(it->get_ref<const std::string&>())
                                    : Result<Duration>(std::unexpected(Error{}));
      if (!parsed || *parsed <= Duration::zero() || *parsed > kMaxPortalLinkTtl) {
        errors.push_back({"ttl", "must be a duration above zero up to 7d, such as 1h"});
      } else {
        ttl = *parsed;
      }
    }
  }
  if (!errors.empty()) return Invalid(std::move(errors));
  const std::string key = GenerateApiKey();
  auto created = stores_.keys.CreateApiKey(
      NewApiKey{"portal link", Role::kTenant, HashApiKey(key), tenant, ttl});
  if (!created) return std::unexpected(created.error());
  // The key itself is in the answer only, never in a log line.
  Log(LogLevel::kInfo, "portal link created",
      {{"tenant_id", tenant}, {"key_id", FormatId(kApiKeyPrefix, created->id)}});
  return JsonReply(
      201, Json{{"url", config_.public_url + "/ui/#key=" + key},
                {"key", key},
                {"expires_at",
                 created->expires_at ? Json(FormatRfc3339(*created->expires_at)) : Json(nullptr)}});
}

}  // namespace webhookd
