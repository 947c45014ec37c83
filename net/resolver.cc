#include "net/resolver.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <cctype>
#include <condition_variable>
#include <cstring>
#include <memory>
#include <mutex>
#include <thread>

#include "base/duration.h"
#include "base/strings.h"

namespace webhookd {
namespace {

bool IsLocalhostName(std::string_view host) {
  std::string name = Lower(host);
  if (!name.empty() && name.back() == '.') name.pop_back();
  return name == "localhost" || name.ends_with(".localhost");
}

Result<std::vector<IpAddress>> GetAddrInfo(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const int rc = getaddrinfo(host.c_str(), nullptr, &hints, &found);
  if (rc != 0) {
    return Fail(ErrorKind::kInvalid, "host does not resolve: " + std::string(gai_strerror(rc)));
  }
  const std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> owner(found, freeaddrinfo);
  std::vector<IpAddress> addresses;
  for (const addrinfo* ai = found; ai != nullptr; ai = ai->ai_next) {
    IpAddress address;
    if (ai->ai_family == AF_INET && ai->ai_addrlen >= sizeof(sockaddr_in)) {
      const auto* sin = reinterpret_cast<const sockaddr_in*>(ai->ai_addr);
      address = IpAddress::V4(ntohl(sin->sin_addr.s_addr));
    } else if (ai->ai_family == AF_INET6 && ai->ai_addrlen >= sizeof(sockaddr_in6)) {
      const auto* sin6 = reinterpret_cast<const sockaddr_in6*>(ai->ai_addr);
      std::array<uint8_t, 16> bytes;
      std::memcpy(bytes.data(), &sin6->sin6_addr, bytes.size());
      address = IpAddress::V6(bytes);
    } else {
      continue;
    }
    if (std::find(addresses.begin(), addresses.end(), address) == addresses.end()) {
      addresses.push_back(address);
    }
  }
  if (addresses.empty()) return Fail(ErrorKind::kInvalid, "host does not resolve");
  return addresses;
}

// What a lookup's thread and its caller share; the caller may have gone by the time the
// thread writes.
struct PendingLookup {
  std::mutex mu;
  std::condition_variable done_cv;
  std::optional<Result<std::vector<IpAddress>>> result;
};

}  // namespace

SystemResolver::SystemResolver(Duration deadline, int max_pending, Lookup lookup)
    : deadline_(deadline),
      max_pending_(max_pending),
      lookup_(lookup ? std::move(lookup) : Lookup(GetAddrInfo)),
      pending_(std::make_shared<std::atomic<int>>(0)) {}

Result<std::vector<IpAddress>> SystemResolver::Resolve(const std::string& host) {
  return ResolveHolding(host, nullptr);
}

Result<std::vector<IpAddress>> SystemResolver::ResolveHolding(const std::string& host,
                                                              std::shared_ptr<void> hold) {
  if (pending_->fetch_add(1) >= max_pending_) {
    pending_->fetch_sub(1);
    return Fail(ErrorKind::kUnavailable, "too many name lookups in progress; retry shortly");
  }
  auto lookup = std::make_shared<PendingLookup>();
  std::thread([lookup, pending = pending_, host, ask = lookup_, hold = std::move(hold)]() mutable {
    Result<std::vector<IpAddress>> found = ask(host);
    {
      std::lock_guard lock(lookup->mu);
      lookup->result = std::move(found);
    }
    lookup->done_cv.notify_one();
    hold.reset();
    pending->fetch_sub(1);
  }).detach();
  std::unique_lock lock(lookup->mu);
  if (!lookup->done_cv.wait_for(lock, deadline_, [&] { return lookup->result.has_value(); })) {
    return Fail(ErrorKind::kInvalid, "host did not resolve within " + FormatDuration(deadline_));
  }
  return std::move(*lookup->result);
}

std::optional<Error> RefuseBeforeDns(std::string_view host, bool allow_private) {
  if (host.empty()) return Error{ErrorKind::kInvalid, "host is empty", {}};
  if (const std::optional<IpAddress> literal = ParseIpLiteral(host)) {
    if (!allow_private && !IsPublicAddress(*literal)) {
      return Error{
          ErrorKind::kForbidden, "address " + literal->ToString() + " is not a public address", {}};
    }
    return std::nullopt;
  }
  // What looks like an address but did not parse as one (a zone id, bad brackets) must not
  // reach a resolver that might read it more leniently.
  if (host.find_first_of(":%[]/@ ") != std::string_view::npos) {
    return Error{ErrorKind::kInvalid, "host is not a valid name or address", {}};
  }
  if (!allow_private && IsLocalhostName(host)) {
    return Error{
        ErrorKind::kForbidden, "host " + std::string(host) + " is not a public address", {}};
  }
  return std::nullopt;
}

Result<std::vector<IpAddress>> VetHost(std::string_view host, Resolver& resolver,
                                       bool allow_private) {
  if (auto refused = RefuseBeforeDns(host, allow_private)) return std::unexpected(*refused);
  if (const std::optional<IpAddress> literal = ParseIpLiteral(host)) {
    return std::vector<IpAddress>{*literal};
  }
  Result<std::vector<IpAddress>> addresses = resolver.Resolve(std::string(host));
  // No lookup slot free is no answer about the name: the caller retries.
  if (!addresses && addresses.error().kind == ErrorKind::kUnavailable) return addresses;
  if (!addresses || addresses->empty()) {
    if (allow_private) return Fail(ErrorKind::kInvalid, "host does not resolve");
    return Fail(ErrorKind::kForbidden,
                "host " + std::string(host) + ": " +
                    (addresses ? std::string("host does not resolve") : addresses.error().message));
  }
  if (!allow_private) {
    // One private answer refuses the host: the connection could land on any of them.
    for (const IpAddress& address : *addresses) {
      if (!IsPublicAddress(address)) {
        return Fail(
            ErrorKind::kForbidden,
            "host " + std::string(host) + " resolves to non-public address " + address.ToString());
      }
    }
  }
  return addresses;
}

}  // namespace webhookd
