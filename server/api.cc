#include "server/api.h"

#include <utility>

#include "base/log.h"
#include "net/url.h"

namespace webhookd {

Api::Api(ApiStores stores, Resolver& resolver, ApiOptions options, Metrics* metrics)
    : stores_(stores),
      resolver_(resolver),
      options_(std::move(options)),
      metrics_(metrics),
      catalog_(stores_.catalog, options_.strict_event_types),
      lookups_(options_.lookups_per_tenant) {}

Result<std::vector<FieldError>> Api::CheckDestinationUrl(const std::string& text,
                                                         const std::string& tenant,
                                                         const std::string& field) {
  const bool allow_private = options_.allow_private_destinations;
  auto url = ParseUrl(text);
  if (!url) {
    // The field parser checked the URL already; this is its own message again.
    if (allow_private) return std::vector<FieldError>{};
    return Invalid({{field, url.error().message}});
  }
  // A literal address asks no DNS, so it takes no lookup slot.
  std::optional<LookupShares::Slot> slot;
  if (!ParseIpLiteral(url->host)) {
    slot = lookups_.Take(tenant);
    if (!slot.has_value()) {
      return Fail(ErrorKind::kUnavailable,
                  "too many name lookups in progress for this tenant; retry shortly");
    }
  }
  auto vetted = VetHost(url->host, resolver_, allow_private);
  if (vetted) return std::vector<FieldError>{};
  if (allow_private) {
    // Nothing is refused for its address here; a busy resolver is no reason to refuse
    // either, and says nothing about the name.
    if (vetted.error().kind == ErrorKind::kUnavailable) return std::vector<FieldError>{};
    return std::vector<FieldError>{
        {field, url->host + " does not resolve now: deliveries fail until it does"}};
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
