#include "server/json_codec.h"

#include <algorithm>
#include <map>

#include "base/config.h"
#include "base/duration.h"
#include "core/ids.h"
#include "core/json_scan.h"
#include "core/signing.h"
#include "core/validation.h"
#include "net/client_certificate.h"
#include "net/url.h"

namespace webhookd {
namespace {

Json Time(const std::optional<Timestamp>& t) { return t ? Json(FormatRfc3339(*t)) : Json(nullptr); }

template <typename T>
Json OrNull(const std::optional<T>& v) {
  return v ? Json(*v) : Json(nullptr);
}

void ParseEventTypes(const Json& value, DestinationFields& out, std::vector<FieldError>& errors) {
  if (!value.is_array()) {
    errors.push_back({"event_types", "must be an array of event types or patterns"});
    return;
  }
  if (value.size() > kMaxEventTypeFilters) {
    errors.push_back({"event_types", "must have at most 256 entries"});
    return;
  }
  std::vector<std::string> types;
  for (size_t i = 0; i < value.size(); ++i) {
    const Json& item = value[i];
    const std::string field = "event_types[" + std::to_string(i) + "]";
    if (!item.is_string() || !IsValidEventTypePattern(item.get_ref<const std::string&>())) {
      errors.push_back({field,
                        "must be an event type (1-255 of A-Z a-z 0-9 . _ : -) or a prefix pattern "
                        "ending in .*"});
      continue;
    }
    types.push_back(item.get<std::string>());
  }
  out.event_types = std::move(types);
}

void ParseHeaders(const Json& value, DestinationFields& out, std::vector<FieldError>& errors) {
  if (!value.is_object()) {
    errors.push_back({"headers", "must be an object of header names to string values"});
    return;
  }
  if (value.size() > kMaxCustomHeaders) {
    errors.push_back({"headers", "must have at most 32 headers"});
    return;
  }
  Headers headers;
  for (const auto& [name, v] : value.items()) {
    const std::string field = "headers." + name;
    if (!IsValidHeaderName(name)) {
      errors.push_back({"headers", "header names must be HTTP tokens"});
    } else if (IsReservedHeader(name)) {
      errors.push_back({field, "is set by webhookd and cannot be overridden"});
    } else if (!v.is_string() || !IsValidHeaderValue(v.get_ref<const std::string&>())) {
      errors.push_back({field, "must be a string of visible ASCII characters"});
    } else {
      headers.emplace_back(name, v.get<std::string>());
    }
  }
  out.headers = std::move(headers);
}

// The optional body of a POST that takes one: an empty body is {}; otherwise a JSON
// object.
Result<Json> OptionalObjectBody(std::string_view body) {
  if (body.empty()) return Json::object();
  WEBHOOKD_ASSIGN_OR_RETURN(Json json, ParseJsonBody(body));
  if (!json.is_object()) return Invalid({{"body", "must be a JSON object"}});
  return json;
}

// An optional duration field of `body` ("1h", "7d", ...; "0" when `zero_ok`): `fallback`
// when absent or null; an error on `name` saying `rule` when malformed or out of range.
void DurationField(const Json& body, const char* name, bool zero_ok, Duration max, const char* rule,
                   Duration& out, std::vector<FieldError>& errors) {
  auto it = body.find(name);
  if (it == body.end() || it->is_null()) return;
  Result<Duration> parsed = std::unexpected(Error{});
  if (it->is_string()) {
    const std::string& text = it->get_ref<const std::string&>();
    parsed = zero_ok && text == "0" ? Result<Duration>(Duration::zero()) : ParseDuration(text);
  }
  if (!parsed || *parsed > max || (!zero_ok && *parsed <= Duration::zero())) {
    errors.push_back({name, rule});
    return;
  }
  out = *parsed;
}

// Edits (insert, delete, replace, swap two neighbours) between `a` and `b`.
size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min(
          {d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

// The writable name `name` most likely stands for: a typo away, or its start ("tenant"
// for "tenant_id"); empty when none is close.
std::string_view NearestName(std::string_view name, const KnownMembers& known) {
  // Names are short; a long one is no slip of the keyboard, and not worth the table.
  if (name.size() > 64) return {};
  const size_t farthest = name.size() < 4 ? 1 : 2;
  std::string_view best;
  size_t best_distance = farthest + 1;
  for (std::string_view candidate : known.writable) {
    size_t distance = EditDistance(name, candidate);
    if (name.size() >= 3 && candidate.starts_with(name)) distance = std::min<size_t>(distance, 1);
    if (distance < best_distance) {
      best = candidate;
      best_distance = distance;
    }
  }
  return best;
}

}  // namespace

void CheckMembers(const std::vector<std::string_view>& names, const KnownMembers& known,
                  std::string_view prefix, std::vector<FieldError>& errors) {
  const auto listed = [](std::initializer_list<std::string_view> list, std::string_view name) {
    return std::find(list.begin(), list.end(), name) != list.end();
  };
  // A body of a thousand made-up names hears of the first few: enough to fix it.
  constexpr size_t kMaxReported = 20;
  std::vector<std::string_view> reported;
  for (std::string_view name : names) {
    if (listed(known.writable, name) || listed(known.read_only, name)) continue;
    if (std::find(reported.begin(), reported.end(), name) != reported.end()) continue;
    if (reported.size() == kMaxReported) break;
    reported.push_back(name);
    std::string message = "unknown member";
    if (std::string_view nearest = NearestName(name, known); !nearest.empty()) {
      message += "; did you mean ";
      message += nearest;
      message += '?';
    }
    errors.push_back({std::string(prefix) + std::string(name), std::move(message)});
  }
}

void CheckMembers(const Json& object, const KnownMembers& known, std::string_view prefix,
                  std::vector<FieldError>& errors) {
  if (!object.is_object()) return;
  std::vector<std::string_view> names;
  for (auto it = object.begin(); it != object.end(); ++it) names.push_back(it.key());
  CheckMembers(names, known, prefix, errors);
}

void CheckMembers(const std::vector<JsonMember>& members, const KnownMembers& known,
                  std::string_view prefix, std::vector<FieldError>& errors) {
  std::vector<std::string_view> names;
  names.reserve(members.size());
  for (const JsonMember& m : members) names.push_back(m.key);
  CheckMembers(names, known, prefix, errors);
}

Result<SecretRotation> ParseSecretRotation(std::string_view body, Duration default_grace) {
  WEBHOOKD_ASSIGN_OR_RETURN(Json json, OptionalObjectBody(body));
  SecretRotation rotation{std::nullopt, default_grace};
  std::vector<FieldError> errors;
  CheckMembers(json, {{"secret", "grace_period"}}, "", errors);
  if (auto it = json.find("secret"); it != json.end() && !it->is_null()) {
    if (!it->is_string() || !DecodeSecret(it->get_ref<const std::string&>())) {
      errors.push_back({"secret", "must be whsec_ followed by base64 of 24 to 64 bytes"});
    } else {
      rotation.secret = it->get<std::string>();
    }
  }
  DurationField(json, "grace_period", /*zero_ok=*/true, kMaxSecretGrace,
                "must be 0 or a duration up to 7d, such as 24h", rotation.grace, errors);
  if (!errors.empty()) return Invalid(std::move(errors));
  return rotation;
}

Result<Duration> ParsePortalLinkTtl(std::string_view body, Duration default_ttl) {
  constexpr Duration kMaxPortalLinkTtl = std::chrono::hours(24 * 7);
  WEBHOOKD_ASSIGN_OR_RETURN(Json json, OptionalObjectBody(body));
  Duration ttl = default_ttl;
  std::vector<FieldError> errors;
  CheckMembers(json, {{"ttl"}}, "", errors);
  DurationField(json, "ttl", /*zero_ok=*/false, kMaxPortalLinkTtl,
                "must be a duration above zero up to 7d, such as 1h", ttl, errors);
  if (!errors.empty()) return Invalid(std::move(errors));
  return ttl;
}

Result<std::multimap<std::string, std::string>> ParseReplayFilterBody(std::string_view body) {
  WEBHOOKD_ASSIGN_OR_RETURN(Json json, OptionalObjectBody(body));
  std::multimap<std::string, std::string> query;
  std::vector<FieldError> errors;
  CheckMembers(json, {{"destination_id", "since", "until", "reason", "tenant_id", "all"}}, "",
               errors);
  bool filtered = false;
  for (std::string_view name : {"destination_id", "since", "until", "reason", "tenant_id"}) {
    auto it = json.find(name);
    if (it == json.end() || it->is_null()) continue;
    filtered = true;
    if (!it->is_string()) {
      errors.push_back({std::string(name), "must be a string"});
    } else {
      query.emplace(name, it->get<std::string>());
    }
  }
  bool all = false;
  if (auto it = json.find("all"); it != json.end() && !it->is_null()) {
    if (!it->is_boolean()) {
      errors.push_back({"all", "must be true or false"});
    } else {
      all = it->get<bool>();
    }
  }
  // An empty body replaying every dead letter there is was too easy to send by mistake.
  if (errors.empty() && !filtered && !all) {
    errors.push_back({"all",
                      "must be true to replay every dead letter; or give destination_id, since, "
                      "until, reason or tenant_id"});
  }
  if (!errors.empty()) return Invalid(std::move(errors));
  return query;
}

Result<void> ParseEmptyBody(std::string_view body) {
  WEBHOOKD_ASSIGN_OR_RETURN(Json json, OptionalObjectBody(body));
  std::vector<FieldError> errors;
  CheckMembers(json, {{}}, "", errors);
  if (!errors.empty()) return Invalid(std::move(errors));
  return {};
}

Result<Json> ParseJsonBody(std::string_view body) {
  if (JsonDepth(body, kMaxJsonDepth) > kMaxJsonDepth) {
    // accept() does not recurse: a deep body that is not JSON at all is still malformed.
    if (!Json::accept(body)) return Fail(ErrorKind::kMalformed, "the body is not valid JSON");
    return Invalid({{"body", "JSON nested deeper than 64 levels"}});
  }
  Json json = Json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) return Fail(ErrorKind::kMalformed, "the body is not valid JSON");
  return json;
}

std::string Dump(const Json& json) {
  return json.dump(-1, ' ', false, Json::error_handler_t::replace);
}

namespace {

// `tls`: null (none) or an object of PEM strings; what they hold is checked by the API
// (net/client_certificate.h) before they are kept.
void ParseTls(const Json& value, DestinationFields& out, std::vector<FieldError>& errors) {
  if (value.is_null()) {
    out.tls = std::optional<DestinationTls>();
    return;
  }
  if (!value.is_object()) {
    errors.push_back({"tls", "must be an object or null"});
    return;
  }
  constexpr size_t kMaxPem = size_t{64} * 1024;
  DestinationTls tls;
  const size_t before = errors.size();
  // expires_at is read-only: a GET body may be sent back as it is.
  CheckMembers(value, {{"client_certificate", "client_key", "ca_certificate"}, {"expires_at"}},
               "tls.", errors);
  bool ok = errors.size() == before;
  for (const auto& [name, field] : value.items()) {
    std::optional<std::string>* slot = name == "client_certificate" ? &tls.client_certificate
                                       : name == "client_key"       ? &tls.client_key
                                       : name == "ca_certificate"   ? &tls.ca_certificate
                                                                    : nullptr;
    if (slot == nullptr || field.is_null()) {
      continue;
    } else if (!field.is_string() || field.get_ref<const std::string&>().empty() ||
               field.get_ref<const std::string&>().size() > kMaxPem ||
               field.get_ref<const std::string&>().find('\0') != std::string::npos) {
      errors.push_back({"tls." + name, "must be PEM text of at most 64 KiB"});
      ok = false;
    } else {
      *slot = field.get<std::string>();
    }
  }
  if (!ok) return;
  if (!tls.client_certificate && !tls.client_key && !tls.ca_certificate) {
    out.tls = std::optional<DestinationTls>();  // {} is no settings, as null is
  } else {
    out.tls = std::optional<DestinationTls>(std::move(tls));
  }
}

// `auth`: null (none) or OAuth 2.0 client credentials. The token URL's address is vetted
// by the API as a destination URL's is.
void ParseAuth(const Json& value, DestinationFields& out, std::vector<FieldError>& errors) {
  if (value.is_null()) {
    out.auth = std::optional<DestinationAuth>();
    return;
  }
  if (!value.is_object()) {
    errors.push_back({"auth", "must be an object or null"});
    return;
  }
  const auto text = [&](const char* name, bool required) -> std::optional<std::string> {
    auto it = value.find(name);
    if (it == value.end() || it->is_null()) {
      if (required) errors.push_back({std::string("auth.") + name, "is required"});
      return std::nullopt;
    }
    if (!it->is_string() || it->get_ref<const std::string&>().empty() ||
        it->get_ref<const std::string&>().size() > 2048 ||
        it->get_ref<const std::string&>().find_first_of(std::string_view("\0\r\n", 3)) !=
            std::string::npos) {
      errors.push_back({std::string("auth.") + name,
                        "must be a string of 1 to 2048 bytes without NUL or line breaks"});
      return std::nullopt;
    }
    return it->get<std::string>();
  };
  const size_t before = errors.size();
  auto type = value.find("type");
  if (type == value.end() || !type->is_string() ||
      type->get_ref<const std::string&>() != "oauth2_client_credentials") {
    errors.push_back({"auth.type", "must be \"oauth2_client_credentials\""});
  }
  CheckMembers(value, {{"type", "token_url", "client_id", "client_secret", "scope"}}, "auth.",
               errors);
  DestinationAuth auth;
  auto token_url = text("token_url", true);
  if (token_url) {
    if (auto url = ParseUrl(*token_url); !url) {
      errors.push_back({"auth.token_url", url.error().message});
    }
  }
  auto client_id = text("client_id", true);
  auto client_secret = text("client_secret", true);
  auto scope = text("scope", false);
  if (errors.size() != before) return;
  out.auth = std::optional<DestinationAuth>(
      DestinationAuth{*token_url, *client_id, *client_secret, std::move(scope)});
}

}  // namespace

Result<DestinationFields> ParseDestinationFields(const Json& body, bool creating) {
  if (!body.is_object()) return Invalid({{"body", "must be a JSON object"}});
  DestinationFields out;
  std::vector<FieldError> errors;
  // The read-only members are those of the destination's view (DestinationJson) and the
  // warnings of a write's answer, so that an answer can be sent back as it came.
  CheckMembers(
      body,
      {{"url", "description", "event_types", "secret", "headers", "enabled", "tenant_id",
        "max_in_flight", "rate_limit", "ordering", "on_dead_letter", "filter", "tls", "auth"},
       {"id", "disabled_reason", "health", "created_at", "updated_at", "warnings"}},
      "", errors);
  if (auto it = body.find("url"); it != body.end()) {
    if (!it->is_string()) {
      errors.push_back({"url", "must be a string"});
    } else if (auto url = ParseUrl(it->get_ref<const std::string&>()); !url) {
      errors.push_back({"url", url.error().message});
    } else {
      out.url = it->get<std::string>();
    }
  } else if (creating) {
    errors.push_back({"url", "is required"});
  }
  if (auto it = body.find("description"); it != body.end() && !it->is_null()) {
    // PostgreSQL text cannot hold NUL: refuse it rather than store a truncated string.
    if (!it->is_string() || it->get_ref<const std::string&>().size() > kMaxDescriptionLength ||
        it->get_ref<const std::string&>().find('\0') != std::string::npos) {
      errors.push_back({"description", "must be a string of at most 1024 bytes without NUL"});
    } else {
      out.description = it->get<std::string>();
    }
  }
  if (auto it = body.find("event_types"); it != body.end() && !it->is_null()) {
    ParseEventTypes(*it, out, errors);
  }
  if (auto it = body.find("secret"); it != body.end() && !it->is_null()) {
    if (!it->is_string() || !DecodeSecret(it->get_ref<const std::string&>())) {
      errors.push_back({"secret", "must be whsec_ followed by base64 of 24 to 64 bytes"});
    } else {
      out.secret = it->get<std::string>();
    }
  }
  if (auto it = body.find("headers"); it != body.end() && !it->is_null()) {
    ParseHeaders(*it, out, errors);
  }
  if (auto it = body.find("enabled"); it != body.end()) {
    if (!it->is_boolean()) {
      errors.push_back({"enabled", "must be true or false"});
    } else {
      out.enabled = it->get<bool>();
    }
  }
  if (auto it = body.find("tenant_id"); it != body.end()) {
    if (it->is_null()) {
      out.tenant_id = std::optional<std::string>();
    } else if (!it->is_string() || !IsValidTenantId(it->get_ref<const std::string&>())) {
      errors.push_back({"tenant_id", kTenantIdRule});
    } else {
      out.tenant_id = std::optional<std::string>(it->get<std::string>());
    }
  }
  if (auto it = body.find("max_in_flight"); it != body.end()) {
    if (it->is_null()) {
      out.max_in_flight = std::optional<int>();
    } else if (!it->is_number_integer() || it->get<int64_t>() < 1 ||
               it->get<int64_t>() > kMaxMaxInFlight) {
      errors.push_back({"max_in_flight", "must be an integer from 1 to 10000"});
    } else {
      out.max_in_flight = std::optional<int>(it->get<int>());
    }
  }
  if (auto it = body.find("ordering"); it != body.end() && !it->is_null()) {
    std::optional<Ordering> ordering;
    if (it->is_string()) ordering = ParseOrdering(it->get_ref<const std::string&>());
    if (!ordering) {
      errors.push_back({"ordering", "must be \"none\" or \"fifo\""});
    } else {
      out.ordering = ordering;
    }
  }
  if (auto it = body.find("on_dead_letter"); it != body.end() && !it->is_null()) {
    std::optional<OnDeadLetter> on_dead_letter;
    if (it->is_string()) on_dead_letter = ParseOnDeadLetter(it->get_ref<const std::string&>());
    if (!on_dead_letter) {
      errors.push_back({"on_dead_letter", "must be \"continue\" or \"block\""});
    } else {
      out.on_dead_letter = on_dead_letter;
    }
  }
  if (auto it = body.find("filter"); it != body.end()) {
    // Its rule (syntax, cost, a predicate) runs in PostgreSQL when it is stored.
    if (it->is_null()) {
      out.filter = std::optional<std::string>();
    } else if (!it->is_string() ||
               it->get_ref<const std::string&>().find('\0') != std::string::npos) {
      errors.push_back({"filter", "must be a SQL/JSON path predicate (a string) or null"});
    } else {
      out.filter = std::optional<std::string>(it->get<std::string>());
    }
  }
  if (auto it = body.find("tls"); it != body.end()) {
    ParseTls(*it, out, errors);
  }
  if (auto it = body.find("auth"); it != body.end()) {
    ParseAuth(*it, out, errors);
  }
  if (auto it = body.find("rate_limit"); it != body.end()) {
    if (it->is_null()) {
      out.rate_limit = std::optional<int>();
    } else if (!it->is_number_integer() || it->get<int64_t>() < 1 ||
               it->get<int64_t>() > kMaxRateLimit) {
      errors.push_back({"rate_limit", "must be an integer from 1 to 100000"});
    } else {
      out.rate_limit = std::optional<int>(it->get<int>());
    }
  }
  if (!errors.empty()) return Invalid(std::move(errors));
  return out;
}

Result<std::vector<JsonMember>> ScanJsonBody(std::string_view body) {
  auto members = ScanJsonObject(body, kMaxJsonDepth);
  if (!members && members.error().kind == ErrorKind::kMalformed) {
    return Fail(ErrorKind::kMalformed,
                "the body is not valid JSON (" + members.error().message + ")");
  }
  return members;
}

Result<NewEvent> ParseNewEvent(std::string_view body) {
  // The payload is kept as the bytes it has in the body, so the scanner validates the
  // whole body and hands back each member's raw text instead of a parsed value.
  WEBHOOKD_ASSIGN_OR_RETURN(std::vector<JsonMember> members, ScanJsonBody(body));
  // A repeated member keeps its last value, as JSON parsers commonly do.
  std::map<std::string, const JsonMember*> by_name;
  for (const JsonMember& m : members) by_name[m.key] = &m;
  const auto member = [&](const char* name) -> const JsonMember* {
    auto it = by_name.find(name);
    return it == by_name.end() ? nullptr : it->second;
  };
  NewEvent event;
  std::vector<FieldError> errors;
  CheckMembers(members, {{"type", "payload", "destination_id", "tenant_id", "ordering_key"}}, "",
               errors);
  if (const JsonMember* type = member("type"); type == nullptr) {
    errors.push_back({"type", "is required"});
  } else {
    auto text = type->kind == JsonKind::kString ? DecodeJsonString(type->raw)
                                                : Result<std::string>(std::string());
    if (!text || !IsValidEventType(*text)) {
      errors.push_back({"type", "must be 1-255 characters of A-Z a-z 0-9 . _ : -"});
    } else if (IsReservedEventType(*text)) {
      errors.push_back(
          {"type", "types starting with \"webhookd.\" are reserved for webhookd's own events"});
    } else {
      event.type = std::move(*text);
    }
  }
  if (const JsonMember* payload = member("payload"); payload == nullptr) {
    errors.push_back({"payload", "is required"});
  } else if (payload->kind != JsonKind::kObject) {
    errors.push_back({"payload", "must be a JSON object"});
  } else {
    event.payload = std::string(payload->raw);
  }
  if (const JsonMember* target = member("destination_id");
      target != nullptr && target->kind != JsonKind::kNull) {
    std::optional<int64_t> id;
    if (target->kind == JsonKind::kString) {
      if (auto text = DecodeJsonString(target->raw)) id = ParseId(kDestinationPrefix, *text);
    }
    if (!id) {
      errors.push_back({"destination_id", "no destination with that id"});
    } else {
      event.destination_id = id;
    }
  }
  if (const JsonMember* tenant = member("tenant_id");
      tenant != nullptr && tenant->kind != JsonKind::kNull) {
    auto text = tenant->kind == JsonKind::kString ? DecodeJsonString(tenant->raw)
                                                  : Result<std::string>(std::string());
    if (!text || !IsValidTenantId(*text)) {
      errors.push_back({"tenant_id", kTenantIdRule});
    } else {
      event.tenant_id = std::move(*text);
    }
  }
  if (const JsonMember* key = member("ordering_key");
      key != nullptr && key->kind != JsonKind::kNull) {
    auto text = key->kind == JsonKind::kString ? DecodeJsonString(key->raw)
                                               : Result<std::string>(std::string());
    if (!text || !IsValidOrderingKey(*text)) {
      errors.push_back({"ordering_key", kOrderingKeyRule});
    } else {
      event.ordering_key = std::move(*text);
    }
  }
  if (!errors.empty()) return Invalid(std::move(errors));
  return event;
}

namespace {

// The key is write-only: "set" when there is one. `expires_at`: the client certificate's.
Json TlsJson(const std::optional<DestinationTls>& tls) {
  if (!tls) return nullptr;
  std::optional<Timestamp> expires;
  if (tls->client_certificate) expires = CertificateExpiry(*tls->client_certificate);
  return {{"client_certificate", OrNull(tls->client_certificate)},
          {"client_key", tls->client_key ? Json(kHiddenHeaderValue) : Json(nullptr)},
          {"ca_certificate", OrNull(tls->ca_certificate)},
          {"expires_at", Time(expires)}};
}

// The client secret is write-only: "set".
Json AuthJson(const std::optional<DestinationAuth>& auth) {
  if (!auth) return nullptr;
  return {{"type", "oauth2_client_credentials"},
          {"token_url", auth->token_url},
          {"client_id", auth->client_id},
          {"client_secret", kHiddenHeaderValue},
          {"scope", OrNull(auth->scope)}};
}

}  // namespace

Json DestinationJson(const Destination& d, int default_max_in_flight, bool with_secret) {
  // Header values are credentials as often as not (Authorization): write-only.
  Json headers = Json::object();
  for (const auto& header : d.headers) headers[header.first] = kHiddenHeaderValue;
  const int max_in_flight = d.max_in_flight.value_or(default_max_in_flight);
  const DestinationHealth& h = d.health;
  Json health = {
      {"circuit", CircuitStateName(h.circuit)},
      {"consecutive_failures", h.consecutive_failures},
      {"failing_since", Time(h.failing_since)},
      {"next_probe_at", h.circuit == CircuitState::kClosed ? Json(nullptr) : Time(h.next_probe_at)},
      {"effective_max_in_flight",
       std::min(h.effective_max_in_flight.value_or(max_in_flight), max_in_flight)}};
  Json j = {{"id", FormatId(kDestinationPrefix, d.id)},
            {"url", d.url},
            {"description", d.description},
            {"event_types", d.event_types},
            {"headers", std::move(headers)},
            {"enabled", d.enabled},
            {"max_in_flight", max_in_flight},
            {"rate_limit", OrNull(d.rate_limit)},
            {"ordering", OrderingName(d.ordering)},
            {"on_dead_letter", OnDeadLetterName(d.on_dead_letter)},
            {"filter", OrNull(d.filter)},
            {"tls", TlsJson(d.tls)},
            {"auth", AuthJson(d.auth)},
            {"disabled_reason",
             d.disabled_reason ? Json(DisabledReasonName(*d.disabled_reason)) : Json(nullptr)},
            {"health", std::move(health)},
            {"created_at", FormatRfc3339(d.created_at)},
            {"updated_at", FormatRfc3339(d.updated_at)},
            {"tenant_id", OrNull(d.tenant_id)}};
  if (with_secret) j["secret"] = d.secret;
  return j;
}

Json DeliveryJson(const Delivery& d) {
  return {{"id", FormatId(kDeliveryPrefix, d.id)},
          {"event_id", FormatId(kEventPrefix, d.event_id)},
          {"destination_id", FormatId(kDestinationPrefix, d.destination_id)},
          {"status", DeliveryStatusName(d.status)},
          {"attempt_count", d.attempt_count},
          {"next_attempt_at", Time(d.next_attempt_at)},
          {"last_attempt_at", Time(d.last_attempt_at)},
          {"last_status_code", OrNull(d.last_status_code)},
          {"last_error", OrNull(d.last_error)},
          {"created_at", FormatRfc3339(d.created_at)},
          {"updated_at", FormatRfc3339(d.updated_at)},
          {"tenant_id", OrNull(d.tenant_id)},
          {"ordering_key", OrNull(d.ordering_key)},
          {"blocked_by", d.blocked_by ? Json(FormatId(kDeliveryPrefix, *d.blocked_by)) : Json()}};
}

Json ReceiptJson(const Event& e) {
  Json deliveries = Json::array();
  for (const Delivery& d : e.deliveries) {
    deliveries.push_back({{"id", FormatId(kDeliveryPrefix, d.id)},
                          {"destination_id", FormatId(kDestinationPrefix, d.destination_id)},
                          {"status", DeliveryStatusName(d.status)}});
  }
  return {{"id", FormatId(kEventPrefix, e.id)},
          {"type", e.type},
          {"created_at", FormatRfc3339(e.created_at)},
          {"deliveries", std::move(deliveries)}};
}

std::string EventText(const Event& e, bool with_deliveries) {
  Json j = {{"id", FormatId(kEventPrefix, e.id)},
            {"type", e.type},
            {"created_at", FormatRfc3339(e.created_at)},
            {"tenant_id", OrNull(e.tenant_id)},
            {"ordering_key", OrNull(e.ordering_key)}};
  if (with_deliveries) {
    Json deliveries = Json::array();
    for (const Delivery& d : e.deliveries) deliveries.push_back(DeliveryJson(d));
    j["deliveries"] = std::move(deliveries);
  }
  // The payload goes in as its stored bytes: through a JSON value it would lose big
  // numbers' precision, its key order and its spacing.
  std::string text = Dump(j);
  text.pop_back();  // the closing brace
  text += R"(,"payload":)";
  text += e.payload;
  text += '}';
  return text;
}

Json AttemptJson(const Attempt& a) {
  return {{"attempt_number", a.attempt_number}, {"started_at", FormatRfc3339(a.started_at)},
          {"duration_ms", a.duration_ms},       {"status_code", OrNull(a.status_code)},
          {"error", OrNull(a.error)},           {"response_body", a.response_body},
          {"outcome", OutcomeName(a.outcome)}};
}

Json DeadLetterJson(const DeadLetter& d) {
  return {{"id", FormatId(kDeadLetterPrefix, d.id)},
          {"delivery_id", FormatId(kDeliveryPrefix, d.delivery_id)},
          {"event_id", FormatId(kEventPrefix, d.event_id)},
          {"destination_id", FormatId(kDestinationPrefix, d.destination_id)},
          {"reason", DeadLetterReasonName(d.reason)},
          {"attempt_count", d.attempt_count},
          {"last_status_code", OrNull(d.last_status_code)},
          {"last_error", OrNull(d.last_error)},
          {"dead_lettered_at", FormatRfc3339(d.dead_lettered_at)},
          {"replayed_at", Time(d.replayed_at)},
          {"dismissed_at", Time(d.dismissed_at)},
          {"tenant_id", OrNull(d.tenant_id)}};
}

Json TenantJson(const TenantSummary& t) {
  return {{"tenant_id", t.tenant_id},
          {"destinations", t.destinations},
          {"pending", t.pending},
          {"dead_letters", t.dead_letters}};
}

Json SecretJson(const std::string& secret) { return Json{{"secret", secret}}; }

Json RotatedSecretJson(const std::string& secret, Timestamp previous_valid_until) {
  return Json{{"secret", secret}, {"previous_valid_until", FormatRfc3339(previous_valid_until)}};
}

Json AttemptsJson(const Listing<Attempt>& attempts) {
  Json data = Json::array();
  for (const Attempt& a : attempts.items) data.push_back(AttemptJson(a));
  // The cursor is the last attempt number of the page.
  Json next = attempts.next_before_id ? Json(std::to_string(*attempts.next_before_id)) : Json();
  return Json{{"data", std::move(data)}, {"next_cursor", std::move(next)}};
}

std::string EventListText(const Listing<Event>& listing) {
  // Written as text: each payload goes in as its stored bytes.
  std::string body = R"({"data":[)";
  for (size_t i = 0; i < listing.items.size(); ++i) {
    if (i > 0) body += ',';
    body += EventText(listing.items[i], /*with_deliveries=*/false);
  }
  body += R"(],"next_cursor":)";
  body += listing.next_before_id ? Dump(Json(FormatId(kEventPrefix, *listing.next_before_id)))
                                 : std::string("null");
  body += '}';
  return body;
}

Json TenantListJson(const TenantListing& listing) {
  Json data = Json::array();
  for (const TenantSummary& t : listing.items) data.push_back(TenantJson(t));
  return Json{{"data", std::move(data)}, {"next_cursor", OrNull(listing.next_after_id)}};
}

Json ReplayedJson(int64_t delivery_id) {
  return Json{{"delivery_id", FormatId(kDeliveryPrefix, delivery_id)}};
}

Json BulkReplayedJson(int64_t count, bool more) {
  return Json{{"replayed", count}, {"more", more}};
}

Json StatsJson(Duration window, const HealthStats& stats) {
  return Json{{"window", FormatDuration(window)},
              {"attempts", stats.attempts},
              {"retry_rate", stats.retry_rate},
              {"dead_letter_rate", stats.dead_letter_rate},
              {"avg_attempts_to_success", stats.avg_attempts_to_success},
              {"second_attempt_success_rate", stats.second_attempt_success_rate},
              {"retrying_over_24h", stats.retrying_over_24h},
              {"pending", stats.pending},
              {"in_flight", stats.in_flight}};
}

Json StatsSeriesJson(Duration window, Duration step, const std::vector<StatsPoint>& points) {
  Json data = Json::array();
  for (const StatsPoint& p : points) {
    data.push_back(Json{{"at", FormatRfc3339(p.at)},
                        {"attempts", p.attempts},
                        {"successes", p.successes},
                        {"failures", p.failures},
                        {"dead_letters", p.dead_letters}});
  }
  return Json{{"window", FormatDuration(window)},
              {"step", FormatDuration(step)},
              {"points", std::move(data)}};
}

Json PortalLinkJson(const std::string& url, const std::string& key,
                    const std::optional<Timestamp>& expires_at) {
  return Json{{"url", url}, {"key", key}, {"expires_at", Time(expires_at)}};
}

}  // namespace webhookd
