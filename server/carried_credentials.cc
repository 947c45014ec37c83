#include "server/carried_credentials.h"

#include <algorithm>
#include <string>

#include "net/broker_url.h"

namespace webhookd {
namespace {

// The parsers give the scheme and hosts in lowercase and the ports explicit, so
// "https://a.example" and "HTTPS://A.example:443/x" are one origin, as are two AMQP vhosts
// of one broker. A URL that does not parse is another origin: nothing is kept for what
// cannot be compared.
bool SameOrigin(const std::string& a, const std::string& b) {
  const auto x = ParseDestinationAddress(a);
  const auto y = ParseDestinationAddress(b);
  return x && y && *x == *y;
}

constexpr std::string_view kMoved =
    "was given for the receiver at the current url: send it again (or remove it) to change "
    "the url's scheme, host or port";

}  // namespace

std::vector<FieldError> CarriedCredentials(const Destination& stored,
                                           const DestinationFields& patch) {
  std::vector<FieldError> errors;
  const bool url_moves = patch.url && !SameOrigin(stored.url, *patch.url);
  if (url_moves) {
    for (const auto& header : stored.headers) {
      const std::string& name = header.first;
      // The stored statement keeps a header only when the patch leaves `headers` out or
      // sends "set" under the very same name (update_destination.sql).
      const bool kept =
          !patch.headers || std::ranges::any_of(*patch.headers, [&name](const auto& given) {
            return given.first == name && given.second == kHiddenHeaderValue;
          });
      if (kept) errors.push_back({"headers." + name, std::string(kMoved)});
    }
    if (stored.tls && stored.tls->client_key) {
      const bool kept = !patch.tls || (*patch.tls && (*patch.tls)->client_key &&
                                       *(*patch.tls)->client_key == kHiddenHeaderValue);
      if (kept) errors.push_back({"tls.client_key", std::string(kMoved)});
    }
  }
  if (url_moves && stored.broker) {
    // A patch keeps a broker credential when it leaves `broker` out or sends "set" for it.
    const auto kept = [&](std::optional<std::string> BrokerSettings::*slot) {
      if (!((*stored.broker).*slot)) return false;
      return !patch.broker || (*patch.broker && (**patch.broker).*slot == kHiddenHeaderValue);
    };
    if (kept(&BrokerSettings::username)) errors.push_back({"broker.username", std::string(kMoved)});
    if (kept(&BrokerSettings::password)) errors.push_back({"broker.password", std::string(kMoved)});
  }
  if (stored.auth) {
    const bool kept =
        !patch.auth || (*patch.auth && (*patch.auth)->client_secret == kHiddenHeaderValue);
    // The secret goes to the token URL; the tokens it buys go to `url`.
    const bool token_url_moves =
        patch.auth && *patch.auth && (*patch.auth)->token_url != stored.auth->token_url;
    if (kept && token_url_moves) {
      errors.push_back({"auth.client_secret", "must be sent itself when auth.token_url changes"});
    } else if (kept && url_moves) {
      errors.push_back({"auth.client_secret", std::string(kMoved)});
    }
  }
  return errors;
}

}  // namespace webhookd
