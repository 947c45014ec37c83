#include "server/destination_codec.h"

#include <algorithm>

#include "base/config.h"
#include "base/duration.h"
#include "core/ids.h"
#include "core/signing.h"
#include "core/validation.h"
#include "net/broker_url.h"
#include "net/client_certificate.h"
#include "net/url.h"
#include "server/broker_settings.h"

namespace webhookd {
namespace {

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

// One member of a destination body: its parser, whether null means "leave it as it is"
// (most members) or is a value of its own (clearing a tenant, a limit, a filter), and
// whether a new destination must have it.
struct MemberRule {
  const char* name;
  bool null_is_absent;
  bool required_on_create;
  void (*parse)(const Json& value, DestinationFields& out, std::vector<FieldError>& errors);
};

void ParseUrl(const Json& value, DestinationFields& out, std::vector<FieldError>& errors) {
  if (!value.is_string()) {
    errors.push_back({"url", "must be a string"});
  } else if (auto url = ParseDestinationAddress(value.get_ref<const std::string&>()); !url) {
    errors.push_back({"url", url.error().message});
  } else {
    out.url = value.get<std::string>();
  }
}

void ParseDescription(const Json& value, DestinationFields& out, std::vector<FieldError>& errors) {
  // PostgreSQL text cannot hold NUL: refuse it rather than store a truncated string.
  if (!value.is_string() || value.get_ref<const std::string&>().size() > kMaxDescriptionLength ||
      value.get_ref<const std::string&>().find('\0') != std::string::npos) {
    errors.push_back({"description", "must be a string of at most 1024 bytes without NUL"});
  } else {
    out.description = value.get<std::string>();
  }
}

void ParseSecret(const Json& value, DestinationFields& out, std::vector<FieldError>& errors) {
  if (!value.is_string() || !DecodeSecret(value.get_ref<const std::string&>())) {
    errors.push_back({"secret", "must be whsec_ followed by base64 of 24 to 64 bytes"});
  } else {
    out.secret = value.get<std::string>();
  }
}

void ParseEnabled(const Json& value, DestinationFields& out, std::vector<FieldError>& errors) {
  if (!value.is_boolean()) {
    errors.push_back({"enabled", "must be true or false"});
  } else {
    out.enabled = value.get<bool>();
  }
}

void ParseTenant(const Json& value, DestinationFields& out, std::vector<FieldError>& errors) {
  if (value.is_null()) {
    out.tenant_id = std::optional<std::string>();
  } else if (!value.is_string() || !IsValidTenantId(value.get_ref<const std::string&>())) {
    errors.push_back({"tenant_id", kTenantIdRule});
  } else {
    out.tenant_id = std::optional<std::string>(value.get<std::string>());
  }
}

// An integer from 1 to `max`, or null (the default).
std::optional<std::optional<int>> BoundedInt(const Json& value, int64_t max) {
  if (value.is_null()) return std::optional<int>();
  if (!value.is_number_integer() || value.get<int64_t>() < 1 || value.get<int64_t>() > max) {
    return std::nullopt;
  }
  return std::optional<int>(value.get<int>());
}

void ParseMaxInFlight(const Json& value, DestinationFields& out, std::vector<FieldError>& errors) {
  if (auto n = BoundedInt(value, kMaxMaxInFlight)) {
    out.max_in_flight = *n;
  } else {
    errors.push_back({"max_in_flight", "must be an integer from 1 to 10000"});
  }
}

void ParseRateLimit(const Json& value, DestinationFields& out, std::vector<FieldError>& errors) {
  if (auto n = BoundedInt(value, kMaxRateLimit)) {
    out.rate_limit = *n;
  } else {
    errors.push_back({"rate_limit", "must be an integer from 1 to 100000"});
  }
}

void ParseOrderingMember(const Json& value, DestinationFields& out,
                         std::vector<FieldError>& errors) {
  std::optional<Ordering> ordering;
  if (value.is_string()) ordering = ParseOrdering(value.get_ref<const std::string&>());
  if (!ordering) {
    errors.push_back({"ordering", "must be \"none\" or \"fifo\""});
  } else {
    out.ordering = ordering;
  }
}

void ParseOnDeadLetterMember(const Json& value, DestinationFields& out,
                             std::vector<FieldError>& errors) {
  std::optional<OnDeadLetter> on_dead_letter;
  if (value.is_string()) on_dead_letter = ParseOnDeadLetter(value.get_ref<const std::string&>());
  if (!on_dead_letter) {
    errors.push_back({"on_dead_letter", "must be \"continue\" or \"block\""});
  } else {
    out.on_dead_letter = on_dead_letter;
  }
}

// "feed", or null: dead letters, as a destination does without the member.
void ParseFallbackMember(const Json& value, DestinationFields& out,
                         std::vector<FieldError>& errors) {
  if (value.is_null()) {
    out.fallback = Fallback::kDeadLetter;
  } else if (value.is_string() && value.get_ref<const std::string&>() == "feed") {
    out.fallback = Fallback::kFeed;
  } else {
    errors.push_back({"fallback", "must be \"feed\" or null"});
  }
}

// Its rule (syntax, cost, a predicate) runs in PostgreSQL when it is stored.
void ParseFilter(const Json& value, DestinationFields& out, std::vector<FieldError>& errors) {
  if (value.is_null()) {
    out.filter = std::optional<std::string>();
  } else if (!value.is_string() ||
             value.get_ref<const std::string&>().find('\0') != std::string::npos) {
    errors.push_back({"filter", "must be a SQL/JSON path predicate (a string) or null"});
  } else {
    out.filter = std::optional<std::string>(value.get<std::string>());
  }
}

// In the order their errors are listed.
constexpr MemberRule kMemberRules[] = {
    {"url", false, true, ParseUrl},
    {"description", true, false, ParseDescription},
    {"event_types", true, false, ParseEventTypes},
    {"secret", true, false, ParseSecret},
    {"headers", true, false, ParseHeaders},
    {"enabled", false, false, ParseEnabled},
    {"tenant_id", false, false, ParseTenant},
    {"max_in_flight", false, false, ParseMaxInFlight},
    {"ordering", true, false, ParseOrderingMember},
    {"on_dead_letter", true, false, ParseOnDeadLetterMember},
    {"fallback", false, false, ParseFallbackMember},
    {"filter", false, false, ParseFilter},
    {"tls", false, false, ParseTls},
    {"auth", false, false, ParseAuth},
    {"broker", false, false, ParseBrokerMember},
    {"rate_limit", false, false, ParseRateLimit},
};
// The key is write-only: "set" when there is one. `expires_at`: the client certificate's.
Json TlsJson(const std::optional<DestinationTls>& tls) {
  if (!tls) return nullptr;
  std::optional<Timestamp> expires;
  if (tls->client_certificate) expires = CertificateExpiry(*tls->client_certificate);
  return {{"client_certificate", OrNull(tls->client_certificate)},
          {"client_key", tls->client_key ? Json(kHiddenHeaderValue) : Json(nullptr)},
          {"ca_certificate", OrNull(tls->ca_certificate)},
          {"expires_at", TimeOrNull(expires)}};
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

Result<DestinationFields> ParseDestinationFields(const Json& body, bool creating) {
  if (!body.is_object()) return Invalid({{"body", "must be a JSON object"}});
  DestinationFields out;
  std::vector<FieldError> errors;
  // The read-only members are those of the destination's view (DestinationJson) and the
  // warnings of a write's answer, so that an answer can be sent back as it came.
  CheckMembers(body,
               {{"url", "description", "event_types", "secret", "headers", "enabled", "tenant_id",
                 "max_in_flight", "rate_limit", "ordering", "on_dead_letter", "fallback", "filter",
                 "tls", "auth", "broker"},
                {"id", "disabled_reason", "health", "created_at", "updated_at", "warnings"}},
               "", errors);
  for (const MemberRule& rule : kMemberRules) {
    auto it = body.find(rule.name);
    if (it == body.end()) {
      if (creating && rule.required_on_create) errors.push_back({rule.name, "is required"});
    } else if (!(rule.null_is_absent && it->is_null())) {
      rule.parse(*it, out, errors);
    }
  }
  if (!errors.empty()) return Invalid(std::move(errors));
  return out;
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

Json DestinationJson(const Destination& d, int default_max_in_flight, bool with_secret) {
  // Header values are credentials as often as not (Authorization): write-only.
  Json headers = Json::object();
  for (const auto& header : d.headers) headers[header.first] = kHiddenHeaderValue;
  const int max_in_flight = d.max_in_flight.value_or(default_max_in_flight);
  const DestinationHealth& h = d.health;
  Json health = {{"circuit", CircuitStateName(h.circuit)},
                 {"consecutive_failures", h.consecutive_failures},
                 {"failing_since", TimeOrNull(h.failing_since)},
                 {"next_probe_at",
                  h.circuit == CircuitState::kClosed ? Json(nullptr) : TimeOrNull(h.next_probe_at)},
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
            {"fallback", d.fallback == Fallback::kFeed ? Json("feed") : Json(nullptr)},
            {"filter", OrNull(d.filter)},
            {"tls", TlsJson(d.tls)},
            {"auth", AuthJson(d.auth)},
            {"broker", BrokerSettingsJson(d.broker)},
            {"disabled_reason",
             d.disabled_reason ? Json(DisabledReasonName(*d.disabled_reason)) : Json(nullptr)},
            {"health", std::move(health)},
            {"created_at", FormatRfc3339(d.created_at)},
            {"updated_at", FormatRfc3339(d.updated_at)},
            {"tenant_id", OrNull(d.tenant_id)}};
  if (with_secret) j["secret"] = d.secret;
  return j;
}

Json SecretJson(const std::string& secret) { return Json{{"secret", secret}}; }

Json RotatedSecretJson(const std::string& secret, Timestamp previous_valid_until) {
  return Json{{"secret", secret}, {"previous_valid_until", FormatRfc3339(previous_valid_until)}};
}

}  // namespace webhookd
