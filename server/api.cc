#include "server/api.h"

#include <utility>

#include "base/log.h"
#include "net/broker_url.h"
#include "net/url.h"
#include "server/source_cache.h"

namespace webhookd {

Api::Api(ApiStores stores, Resolver& resolver, ApiOptions options, Metrics* metrics)
    : stores_(stores),
      resolver_(resolver),
      options_(std::move(options)),
      metrics_(metrics),
      catalog_(stores_.catalog, options_.strict_event_types),
      lookups_(options_.lookups_per_tenant) {
  if (stores_.sources != nullptr) {
    source_cache_ = std::make_unique<SourceCache>(*stores_.sources, options_.source_rate);
  }
}

Api::~Api() = default;

Result<std::vector<FieldError>> Api::CheckDestinationUrl(const std::string& text,
                                                         const std::string& tenant,
                                                         const std::string& field) {
  const bool allow_private = options_.allow_private_destinations;
  auto address = ParseDestinationAddress(text);
  if (!address) {
    // The field parser checked the URL already; this is its own message again.
    if (allow_private) return std::vector<FieldError>{};
    return Invalid({{field, address.error().message}});
  }
  // Every host a broker url names (a Kafka cluster's several) is vetted as a receiver is.
  std::vector<FieldError> warnings;
  for (const HostPort& host : address->hosts) {
    WEBHOOKD_ASSIGN_OR_RETURN(std::optional<FieldError> problem,
                              CheckHost(host.host, tenant, field));
    if (problem) warnings.push_back(std::move(*problem));
  }
  return warnings;
}

Result<std::optional<FieldError>> Api::CheckHost(const std::string& host, const std::string& tenant,
                                                 const std::string& field) {
  const bool allow_private = options_.allow_private_destinations;
  // A literal address asks no DNS, so it takes no lookup slot.
  std::optional<LookupShares::Slot> slot;
  if (!ParseIpLiteral(host)) {
    slot = lookups_.Take(tenant);
    if (!slot.has_value()) {
      return Fail(ErrorKind::kUnavailable,
                  "too many name lookups in progress for this tenant; retry shortly");
    }
  }
  auto vetted = VetHost(host, resolver_, allow_private);
  if (vetted) return std::optional<FieldError>();
  if (allow_private) {
    // Nothing is refused for its address here; a busy resolver is no reason to refuse
    // either, and says nothing about the name.
    if (vetted.error().kind == ErrorKind::kUnavailable) return std::optional<FieldError>();
    return std::optional<FieldError>(
        FieldError{field, host + " does not resolve now: deliveries fail until it does"});
  }
  // Out of lookup slots: webhookd's capacity, not the URL, is at fault.
  if (vetted.error().kind == ErrorKind::kUnavailable) return Propagate(vetted);
  if (vetted.error().kind != ErrorKind::kForbidden) {
    return Invalid({{field, vetted.error().message}});
  }
  Log(LogLevel::kInfo, "destination address refused", {{"reason", vetted.error().message}});
  return Invalid({{field, std::string(kAddressNotAllowed)}});
}

}  // namespace webhookd
