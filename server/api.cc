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
      catalog_(stores_.catalog, options_.strict_event_types) {}

Result<void> Api::CheckDestinationUrl(const std::string& text, const std::string& field) {
  if (options_.allow_private_destinations) return {};
  auto url = ParseUrl(text);
  if (!url) return Invalid({{field, url.error().message}});
  auto vetted = VetHost(url->host, resolver_, /*allow_private=*/false);
  if (vetted) return {};
  if (vetted.error().kind == ErrorKind::kUnavailable) return std::unexpected(vetted.error());
  if (vetted.error().kind != ErrorKind::kForbidden) {
    return Invalid({{field, vetted.error().message}});
  }
  Log(LogLevel::kInfo, "destination address refused", {{"reason", vetted.error().message}});
  return Invalid({{field, std::string(kAddressNotAllowed)}});
}

}  // namespace webhookd
