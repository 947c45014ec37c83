#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/clock.h"
#include "base/result.h"
#include "net/address.h"

namespace webhookd {

// Resolves host names. Injected so the SSRF guard is tested with a scripted DNS.
class Resolver {
 public:
  virtual ~Resolver() = default;
  // Every address `host` resolves to; kInvalid when the name does not resolve.
  virtual Result<std::vector<IpAddress>> Resolve(const std::string& host) = 0;
  // As Resolve, keeping `hold` until the lookup itself ends, which may be after Resolve
  // returns (a lookup given up at its deadline): a caller's share of the lookups
  // (net/lookup_shares.h) is held with it, so names that never answer use up their own
  // tenant's share and no one else's.
  virtual Result<std::vector<IpAddress>> ResolveHolding(const std::string& host,
                                                        std::shared_ptr<void> hold) {
    (void)hold;
    return Resolve(host);
  }
};

// getaddrinfo, each lookup on a thread of its own waited for at most `deadline`: a name
// whose DNS does not answer in time fails (kInvalid) and its thread is left to end when
// getaddrinfo does, so no caller waits longer than the deadline. At most `max_pending`
// lookups may be outstanding (those abandoned included); beyond that Resolve fails at
// once (kUnavailable), so names that never answer cannot pile up threads.
class SystemResolver final : public Resolver {
 public:
  // What asks the name server: getaddrinfo unless a test gives one that hangs.
  using Lookup = std::function<Result<std::vector<IpAddress>>(const std::string& host)>;

  explicit SystemResolver(Duration deadline = std::chrono::seconds(3), int max_pending = 64,
                          Lookup lookup = nullptr);
  Result<std::vector<IpAddress>> Resolve(const std::string& host) override;
  Result<std::vector<IpAddress>> ResolveHolding(const std::string& host,
                                                std::shared_ptr<void> hold) override;

 private:
  Duration deadline_;
  int max_pending_;
  Lookup lookup_;
  std::shared_ptr<std::atomic<int>> pending_;
};

// What a client is told when the private-address rule refuses a destination, whatever
// address was at fault: naming it would make the rule an oracle for internal DNS. The
// detail (VetHost's message) is for the operator's log alone.
inline constexpr std::string_view kAddressNotAllowed = "destination address not allowed";

// What refuses `host` before any DNS lookup: an empty or malformed host (kInvalid), a
// non-public literal address, "localhost" or a name under ".localhost" (kForbidden,
// naming the address: for the log, not for a client), each unless `allow_private` allows
// it. nullopt: a public literal, or a name that DNS must answer for.
std::optional<Error> RefuseBeforeDns(std::string_view host, bool allow_private);

// The addresses it is safe to connect to for `host`: the literal itself or everything it
// resolves to. Unless `allow_private`, any non-public address makes the whole host
// refused (kForbidden, naming the address: for the log, not for a client), and
// "localhost" and names under ".localhost" are refused without asking DNS. A name that
// does not resolve is kInvalid when private addresses are allowed; otherwise it is
// kForbidden too: "does not resolve" beside "not allowed" would tell a client which
// internal names exist (a name private to the network resolves only inside it). kUnavailable
// when the resolver is too busy to ask.
Result<std::vector<IpAddress>> VetHost(std::string_view host, Resolver& resolver,
                                       bool allow_private);

}  // namespace webhookd
