// The destination routes: /v1/destinations and its secret.
#include "core/signing.h"
#include "net/client_certificate.h"
#include "server/api.h"
#include "server/api_request.h"
#include "server/broker_settings.h"
#include "server/carried_credentials.h"
#include "server/destination_codec.h"

namespace webhookd {

using namespace api;

namespace {

// The answer to a write, with what the checks found worth saying but not refusing.
Json WithWarnings(Json view, const std::vector<FieldError>& warnings) {
  if (warnings.empty()) return view;
  Json list = Json::array();
  for (const FieldError& w : warnings) list.push_back({{"field", w.field}, {"message", w.message}});
  view["warnings"] = std::move(list);
  return view;
}

// The broker settings a destination would have, against the url it would have: 422 naming
// each that does not fit.
Result<void> CheckBroker(const std::string& url, const std::optional<BrokerSettings>& broker) {
  auto address = ParseDestinationAddress(url);
  if (!address) return Invalid({{"url", address.error().message}});
  std::vector<FieldError> problems = BrokerSettingsProblems(*address, broker);
  if (!problems.empty()) return Invalid(std::move(problems));
  return {};
}

// A feed is read already: only a destination pushed to falls back to its feed.
Result<void> CheckFallback(const std::string& url, Fallback fallback) {
  if (fallback == Fallback::kFeed && TransportOfUrl(url) == Transport::kFeed) {
    return Invalid({{"fallback",
                     "is for a destination that is pushed to: a feed: destination "
                     "is read already"}});
  }
  return {};
}

// PEM that parses and a key that matches its certificate, or 422 naming the field.
Result<void> CheckTls(const DestinationTls& tls) {
  auto checked = CheckTlsSettings(tls.client_certificate, tls.client_key, tls.ca_certificate);
  if (!checked) return Propagate(checked);
  return {};
}

}  // namespace

Result<Reply> Api::CreateDestination(const ApiRequest& req) {
  WEBHOOKD_ASSIGN_OR_RETURN(Json body, ParseJsonBody(req.body));
  WEBHOOKD_ASSIGN_OR_RETURN(DestinationFields fields,
                            ParseDestinationFields(body, /*creating=*/true));
  // Whose share of name lookups the checks spend: the tenant the destination is for.
  const std::string tenant =
      req.scope.tenant_id.value_or(fields.tenant_id.value_or(std::nullopt).value_or(""));
  WEBHOOKD_ASSIGN_OR_RETURN(std::vector<FieldError> warnings,
                            CheckDestinationUrl(*fields.url, tenant));
  if (fields.tls && *fields.tls) {
    if ((*fields.tls)->client_key == kHiddenHeaderValue) {
      return Invalid({{"tls.client_key", "is the key itself when a destination is created"}});
    }
    WEBHOOKD_RETURN_IF_ERROR(CheckTls(**fields.tls));
  }
  if (fields.auth && *fields.auth) {
    if ((*fields.auth)->client_secret == kHiddenHeaderValue) {
      return Invalid(
          {{"auth.client_secret", "is the secret itself when a destination is created"}});
    }
    WEBHOOKD_ASSIGN_OR_RETURN(
        std::vector<FieldError> more,
        CheckDestinationUrl((*fields.auth)->token_url, tenant, "auth.token_url"));
    warnings.insert(warnings.end(), more.begin(), more.end());
  }
  if (fields.broker && *fields.broker) {
    for (const auto& [name, value] : {std::pair{"broker.username", (*fields.broker)->username},
                                      std::pair{"broker.password", (*fields.broker)->password}}) {
      if (value == kHiddenHeaderValue) {
        return Invalid({{name, "is the credential itself when a destination is created"}});
      }
    }
  }
  WEBHOOKD_RETURN_IF_ERROR(CheckBroker(*fields.url, fields.broker.value_or(std::nullopt)));
  WEBHOOKD_RETURN_IF_ERROR(
      CheckFallback(*fields.url, fields.fallback.value_or(Fallback::kDeadLetter)));
  Destination d;
  // A tenant key makes its own tenant's destinations, whatever the body says.
  d.tenant_id = req.scope.tenant_id ? req.scope.tenant_id : fields.tenant_id.value_or(std::nullopt);
  d.url = *fields.url;
  d.description = fields.description.value_or("");
  d.event_types = fields.event_types.value_or(std::vector<std::string>{});
  d.secret = fields.secret.value_or(GenerateSecret());
  d.headers = fields.headers.value_or(Headers{});
  d.enabled = fields.enabled.value_or(true);
  d.max_in_flight = fields.max_in_flight.value_or(std::nullopt);
  d.rate_limit = fields.rate_limit.value_or(std::nullopt);
  d.ordering = fields.ordering.value_or(Ordering::kNone);
  d.on_dead_letter = fields.on_dead_letter.value_or(OnDeadLetter::kContinue);
  d.fallback = fields.fallback.value_or(Fallback::kDeadLetter);
  d.filter = fields.filter.value_or(std::nullopt);
  d.tls = fields.tls.value_or(std::nullopt);
  d.auth = fields.auth.value_or(std::nullopt);
  d.broker = fields.broker.value_or(std::nullopt);
  WEBHOOKD_ASSIGN_OR_RETURN(Destination created, stores_.destinations.CreateDestination(
                                                     d, options_.max_destinations_per_tenant));
  return JsonReply(
      201,
      WithWarnings(DestinationJson(created, options_.destination_max_in_flight, true), warnings));
}

Result<Reply> Api::GetDestination(const ApiRequest& req) {
  WEBHOOKD_ASSIGN_OR_RETURN(int64_t id, PathId(req, kDestinationPrefix, "destination"));
  WEBHOOKD_ASSIGN_OR_RETURN(Destination d, stores_.destinations.GetDestination(id, req.scope));
  return JsonReply(200, DestinationJson(d, options_.destination_max_in_flight, false));
}

Result<Reply> Api::ListDestinations(const ApiRequest& req) {
  WEBHOOKD_ASSIGN_OR_RETURN(Page page, ParsePage(req, kDestinationPrefix));
  WEBHOOKD_ASSIGN_OR_RETURN(auto tenant, QueryTenant(req));
  WEBHOOKD_ASSIGN_OR_RETURN(auto listing, stores_.destinations.ListDestinations(
                                              DestinationFilter{tenant}, page, req.scope));
  return ListReply(listing, kDestinationPrefix, [&](const Destination& d) {
    return DestinationJson(d, options_.destination_max_in_flight, false);
  });
}

Result<Reply> Api::GetDestinationSecret(const ApiRequest& req) {
  WEBHOOKD_ASSIGN_OR_RETURN(int64_t id, PathId(req, kDestinationPrefix, "destination"));
  WEBHOOKD_ASSIGN_OR_RETURN(Destination d, stores_.destinations.GetDestination(id, req.scope));
  return JsonReply(200, SecretJson(d.secret));
}

Result<Reply> Api::RotateDestinationSecret(const ApiRequest& req) {
  WEBHOOKD_ASSIGN_OR_RETURN(int64_t id, PathId(req, kDestinationPrefix, "destination"));
  WEBHOOKD_ASSIGN_OR_RETURN(SecretRotation rotation,
                            ParseSecretRotation(req.body, options_.secret_grace));
  const std::string secret = rotation.secret.value_or(GenerateSecret());
  WEBHOOKD_ASSIGN_OR_RETURN(
      Timestamp until, stores_.destinations.RotateSecret(id, secret, rotation.grace, req.scope));
  return JsonReply(200, RotatedSecretJson(secret, until));
}

Result<Reply> Api::UpdateDestination(const ApiRequest& req) {
  WEBHOOKD_ASSIGN_OR_RETURN(int64_t id, PathId(req, kDestinationPrefix, "destination"));
  WEBHOOKD_ASSIGN_OR_RETURN(Json body, ParseJsonBody(req.body));
  WEBHOOKD_ASSIGN_OR_RETURN(DestinationFields fields,
                            ParseDestinationFields(body, /*creating=*/false));
  // Whose share of name lookups the checks spend: a tenant key's tenant; the keys of no
  // tenant share one.
  const std::string tenant = req.scope.tenant_id.value_or("");
  std::vector<FieldError> warnings;
  if (fields.url) {
    WEBHOOKD_ASSIGN_OR_RETURN(warnings, CheckDestinationUrl(*fields.url, tenant));
  }
  if (fields.tls && *fields.tls && (*fields.tls)->client_key != kHiddenHeaderValue) {
    WEBHOOKD_RETURN_IF_ERROR(CheckTls(**fields.tls));
  }
  if (fields.auth && *fields.auth) {
    WEBHOOKD_ASSIGN_OR_RETURN(
        std::vector<FieldError> more,
        CheckDestinationUrl((*fields.auth)->token_url, tenant, "auth.token_url"));
    warnings.insert(warnings.end(), more.begin(), more.end());
  }
  // What a patch keeps of the stored destination is checked against the row the update
  // locks: no other patch can change it in between.
  const auto check = [&fields](const Destination& stored) -> Result<void> {
    if (fields.tls && *fields.tls && (*fields.tls)->client_key == kHiddenHeaderValue) {
      // "set" keeps the stored key, which must then match the certificate given.
      if (!stored.tls || !stored.tls->client_key) {
        return Invalid({{"tls.client_key", "has no stored key to keep: send the key itself"}});
      }
      DestinationTls tls = **fields.tls;
      tls.client_key = stored.tls->client_key;
      WEBHOOKD_RETURN_IF_ERROR(CheckTls(tls));
    }
    if (fields.auth && *fields.auth && (*fields.auth)->client_secret == kHiddenHeaderValue &&
        !stored.auth) {
      return Invalid(
          {{"auth.client_secret", "has no stored secret to keep: send the secret itself"}});
    }
    // The settings the destination would have, "set" standing for the stored credential.
    std::optional<BrokerSettings> broker = fields.broker ? *fields.broker : stored.broker;
    if (fields.broker && broker) {
      for (auto [name, slot] : {std::pair{"broker.username", &BrokerSettings::username},
                                std::pair{"broker.password", &BrokerSettings::password}}) {
        std::optional<std::string>& value = (*broker).*slot;
        if (value != kHiddenHeaderValue) continue;
        if (!stored.broker || !((*stored.broker).*slot)) {
          return Invalid({{name, "has no stored value to keep: send the credential itself"}});
        }
        value = (*stored.broker).*slot;
      }
    }
    WEBHOOKD_RETURN_IF_ERROR(CheckBroker(fields.url.value_or(stored.url), broker));
    WEBHOOKD_RETURN_IF_ERROR(
        CheckFallback(fields.url.value_or(stored.url), fields.fallback.value_or(stored.fallback)));
    std::vector<FieldError> carried = CarriedCredentials(stored, fields);
    if (!carried.empty()) return Invalid(std::move(carried));
    return {};
  };
  WEBHOOKD_ASSIGN_OR_RETURN(Destination d,
                            stores_.destinations.UpdateDestination(id, fields, req.scope, check));
  return JsonReply(
      200, WithWarnings(DestinationJson(d, options_.destination_max_in_flight, false), warnings));
}

Result<Reply> Api::DeleteDestination(const ApiRequest& req) {
  WEBHOOKD_ASSIGN_OR_RETURN(int64_t id, PathId(req, kDestinationPrefix, "destination"));
  WEBHOOKD_RETURN_IF_ERROR(stores_.destinations.DeleteDestination(id, req.scope));
  return Reply{204, "", "", {}};
}

}  // namespace webhookd
