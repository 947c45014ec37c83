#include "store/pg/rows.h"

#include <nlohmann/json.hpp>

#include "store/pg/pg_values.h"

namespace webhookd::pg {

ApiKeyInfo ToApiKey(const pqxx::row& r) {
  ApiKeyInfo k;
  k.id = r[0].as<int64_t>();
  k.name = r[1].c_str();
  // An unknown role can only come from a newer webhookd: the least one is the safe reading.
  k.role = ParseRole(r[2].c_str()).value_or(Role::kTenant);
  k.created_at = ToTimestamp(r[3]);
  k.revoked_at = ToOptionalTimestamp(r[4]);
  k.tenant_id = ToOptionalString(r[5]);
  k.expires_at = ToOptionalTimestamp(r[6]);
  return k;
}

Destination ToDestination(const pqxx::row& r) {
  Destination d;
  d.id = r[0].as<int64_t>();
  d.url = r[1].c_str();
  d.description = r[2].c_str();
  d.event_types = nlohmann::json::parse(r[3].c_str()).get<std::vector<std::string>>();
  d.secret = r[4].c_str();
  d.headers = ParseHeaders(r[5].c_str());
  d.enabled = r[6].as<bool>();
  d.max_in_flight = ToOptionalInt(r[7]);
  d.created_at = ToTimestamp(r[8]);
  d.updated_at = ToTimestamp(r[9]);
  d.tenant_id = ToOptionalString(r[10]);
  d.rate_limit = ToOptionalInt(r[11]);
  if (!r[12].is_null()) d.disabled_reason = ParseDisabledReason(r[12].c_str());
  d.health.circuit = ParseCircuitState(r[13].c_str()).value_or(CircuitState::kClosed);
  d.health.consecutive_failures = r[14].as<int>();
  d.health.failing_since = ToOptionalTimestamp(r[15]);
  d.health.next_probe_at = ToOptionalTimestamp(r[16]);
  d.health.effective_max_in_flight = ToOptionalInt(r[17]);
  d.ordering = ParseOrdering(r[18].c_str()).value_or(Ordering::kNone);
  d.on_dead_letter = ParseOnDeadLetter(r[19].c_str()).value_or(OnDeadLetter::kContinue);
  d.filter = ToOptionalString(r[20]);
  if (!r[21].is_null() || !r[23].is_null()) {
    d.tls =
        DestinationTls{ToOptionalString(r[21]), ToOptionalString(r[22]), ToOptionalString(r[23])};
  }
  if (!r[24].is_null()) {
    d.auth = DestinationAuth{r[24].c_str(), r[25].c_str(), r[26].c_str(), ToOptionalString(r[27])};
  }
  if (!r[28].is_null()) {
    d.broker = ParseBroker(nlohmann::json::parse(r[28].c_str()), ToOptionalString(r[29]),
                           ToOptionalString(r[30]));
  }
  d.fallback = r[31].is_null() ? Fallback::kDeadLetter : Fallback::kFeed;
  return d;
}

std::string BrokerJson(const BrokerSettings& broker) {
  nlohmann::json j = nlohmann::json::object();
  const auto text = [&j](const char* name, const std::optional<std::string>& v) {
    if (v) j[name] = *v;
  };
  text("exchange", broker.exchange);
  text("routing_key", broker.routing_key);
  text("subject", broker.subject);
  text("stream", broker.stream);
  if (broker.max_len) j["max_len"] = *broker.max_len;
  text("topic", broker.topic);
  return j.dump();
}

BrokerSettings ParseBroker(const nlohmann::json& settings, std::optional<std::string> username,
                           std::optional<std::string> password) {
  const auto text = [&settings](const char* name) -> std::optional<std::string> {
    auto it = settings.find(name);
    return it != settings.end() && it->is_string() ? std::optional(it->get<std::string>())
                                                   : std::nullopt;
  };
  BrokerSettings b;
  b.exchange = text("exchange");
  b.routing_key = text("routing_key");
  b.subject = text("subject");
  b.stream = text("stream");
  if (auto it = settings.find("max_len"); it != settings.end() && it->is_number_integer()) {
    b.max_len = it->get<int64_t>();
  }
  b.topic = text("topic");
  b.username = std::move(username);
  b.password = std::move(password);
  return b;
}

Delivery ToDelivery(const pqxx::row& r) {
  Delivery d;
  d.id = r[0].as<int64_t>();
  d.event_id = r[1].as<int64_t>();
  d.destination_id = r[2].as<int64_t>();
  d.status = ParseDeliveryStatus(r[3].c_str()).value_or(DeliveryStatus::kPending);
  d.attempt_count = r[4].as<int>();
  d.next_attempt_at = ToOptionalTimestamp(r[5]);
  d.last_attempt_at = ToOptionalTimestamp(r[6]);
  d.last_status_code = ToOptionalInt(r[7]);
  d.last_error = ToOptionalString(r[8]);
  d.created_at = ToTimestamp(r[9]);
  d.updated_at = ToTimestamp(r[10]);
  d.tenant_id = ToOptionalString(r[11]);
  d.ordering_key = ToOptionalString(r[12]);
  if (!r[13].is_null()) d.blocked_by = r[13].as<int64_t>();
  return d;
}

Event ToEvent(const pqxx::row& r) {
  Event e{r[0].as<int64_t>(),    r[1].c_str(), std::string(r[2].c_str(), r[2].size()),
          ToTimestamp(r[3]),     {},           ToOptionalString(r[4]),
          ToOptionalString(r[5])};
  // array_to_json(subjects): a JSON array of strings, NULL for none.
  if (!r[6].is_null()) {
    for (const auto& s : nlohmann::json::parse(r[6].c_str()))
      e.subjects.push_back(s.get<std::string>());
  }
  e.erased_at = ToOptionalTimestamp(r[7]);
  if (!r[8].is_null()) {
    e.source = EventSource{r[8].as<int64_t>(), r[9].c_str(), ToOptionalString(r[10])};
  }
  return e;
}

DeadLetter ToDeadLetter(const pqxx::row& r) {
  DeadLetter d;
  d.id = r[0].as<int64_t>();
  d.delivery_id = r[1].as<int64_t>();
  d.event_id = r[2].as<int64_t>();
  d.destination_id = r[3].as<int64_t>();
  d.reason = ParseDeadLetterReason(r[4].c_str()).value_or(DeadLetterReason::kExhausted);
  d.attempt_count = r[5].as<int>();
  d.last_status_code = ToOptionalInt(r[6]);
  d.last_error = ToOptionalString(r[7]);
  d.dead_lettered_at = ToTimestamp(r[8]);
  d.replayed_at = ToOptionalTimestamp(r[9]);
  d.tenant_id = ToOptionalString(r[10]);
  d.dismissed_at = ToOptionalTimestamp(r[11]);
  return d;
}

Attempt ToAttempt(const pqxx::row& r) {
  Attempt a;
  a.delivery_id = r[0].as<int64_t>();
  a.attempt_number = r[1].as<int>();
  a.started_at = ToTimestamp(r[2]);
  a.duration_ms = r[3].as<int>();
  a.status_code = ToOptionalInt(r[4]);
  a.error = ToOptionalString(r[5]);
  a.response_body = std::string(r[6].c_str(), r[6].size());
  a.outcome = ParseOutcome(r[7].c_str()).value_or(Outcome::kRetryable);
  return a;
}

ClaimedDelivery ToClaimed(const pqxx::row& r, int64_t claim_token) {
  ClaimedDelivery d;
  d.delivery_id = r[0].as<int64_t>();
  d.claim_token = claim_token;
  d.event_id = r[1].as<int64_t>();
  d.event_type = r[2].c_str();
  d.payload = std::string(r[3].c_str(), r[3].size());
  d.event_created_at = ToTimestamp(r[4]);
  d.destination_id = r[5].as<int64_t>();
  d.url = r[6].c_str();
  // Space-separated by the claim function (a secret has no spaces).
  std::string_view secrets = r[7].c_str();
  while (!secrets.empty()) {
    const size_t space = std::min(secrets.find(' '), secrets.size());
    d.secrets.emplace_back(secrets.substr(0, space));
    secrets.remove_prefix(std::min(space + 1, secrets.size()));
  }
  d.headers = ParseHeaders(r[8].c_str());
  d.attempt_count = r[9].as<int>();
  d.cycle_attempts = r[10].as<int>();
  d.created_at = ToTimestamp(r[11]);
  const std::string_view kind = r[12].c_str();
  d.kind = kind == "probe"  ? ClaimKind::kProbe
           : kind == "skip" ? ClaimKind::kSkip
                            : ClaimKind::kSend;
  d.clean = !r[13].is_null() && r[13].as<bool>();
  if (!r[14].is_null()) {
    const auto egress = nlohmann::json::parse(r[14].c_str());
    const auto text = [&](const char* name) -> std::optional<std::string> {
      const auto& v = egress["tls"][name];
      return v.is_string() ? std::optional(v.get<std::string>()) : std::nullopt;
    };
    if (egress.contains("tls")) {
      d.tls =
          DestinationTls{text("client_certificate"), text("client_key"), text("ca_certificate")};
    }
    if (egress.contains("auth")) {
      const auto& a = egress["auth"];
      d.auth = DestinationAuth{
          a.value("token_url", ""), a.value("client_id", ""), a.value("client_secret", ""),
          a.contains("scope") ? std::optional(a["scope"].get<std::string>()) : std::nullopt};
    }
    if (egress.contains("broker")) {
      const auto& b = egress["broker"];
      const auto credential = [&b](const char* name) -> std::optional<std::string> {
        auto it = b.find(name);
        return it != b.end() && it->is_string() ? std::optional(it->get<std::string>())
                                                : std::nullopt;
      };
      d.broker = ParseBroker(b["settings"], credential("username"), credential("password"));
      d.ordering_key = credential("ordering_key");
    }
  }
  d.traceparent = r[15].is_null() ? "" : r[15].c_str();
  d.tracestate = r[16].is_null() ? "" : r[16].c_str();
  if (!r[17].is_null()) d.tenant_id = r[17].c_str();
  return d;
}

Delivery NewDelivery(int64_t id, int64_t event_id, int64_t destination_id, Timestamp created_at,
                     const std::optional<std::string>& tenant_id) {
  Delivery d;
  d.id = id;
  d.event_id = event_id;
  d.destination_id = destination_id;
  d.tenant_id = tenant_id;
  d.created_at = d.updated_at = created_at;
  d.next_attempt_at = created_at;
  return d;
}

std::string HeadersJson(const Headers& headers) {
  nlohmann::json object = nlohmann::json::object();
  for (const auto& [name, value] : headers) object[name] = value;
  return object.dump();
}

Headers ParseHeaders(const char* json) {
  Headers headers;
  // A named object: ranging over a temporary's items() would dangle.
  const nlohmann::json object = nlohmann::json::parse(json);
  for (const auto& [name, value] : object.items()) {
    headers.emplace_back(name, value.get<std::string>());
  }
  return headers;
}

std::string TextArray(const std::vector<std::string>& items) {
  ArrayLiteral array;
  for (const auto& item : items) array.Add(std::string_view(item));
  return array.Finish();
}

}  // namespace webhookd::pg
