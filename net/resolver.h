#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "net/address.h"

namespace webhookd {

// Resolves host names. Injected so the SSRF guard is tested with a scripted DNS.
class Resolver {
 public:
  virtual ~Resolver() = default;
  // Every address `host` resolves to; kInvalid when the name does not resolve.
  virtual Result<std::vector<IpAddress>> Resolve(const std::string& host) = 0;
};

// getaddrinfo.
class SystemResolver final : public Resolver {
 public:
  Result<std::vector<IpAddress>> Resolve(const std::string& host) override;
};

// What a client is told when the private-address rule refuses a destination, whatever
// address was at fault: naming it would make the rule an oracle for internal DNS. The
// detail (VetHost's message) is for the operator's log alone.
inline constexpr std::string_view kAddressNotAllowed = "destination address not allowed";

// The addresses it is safe to connect to for `host`: the literal itself or everything it
// resolves to. Unless `allow_private`, any non-public address makes the whole host
// refused (kForbidden, naming the address: for the log, not for a client), and
// "localhost" and names under ".localhost" are refused without asking DNS.
Result<std::vector<IpAddress>> VetHost(std::string_view host, Resolver& resolver,
                                       bool allow_private);

}  // namespace webhookd
