#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace webhookd {

// An IPv4 or IPv6 address, as it would be connected to.
struct IpAddress {
  bool v6 = false;
  std::array<uint8_t, 16> bytes{};  // IPv4 uses the first 4

  static IpAddress V4(uint32_t host_order);
  static IpAddress V6(const std::array<uint8_t, 16>& bytes);
  // "203.0.113.7" or "2001:db8::1" (no brackets).
  std::string ToString() const;
  bool operator==(const IpAddress&) const = default;
};

// Parses a host that is an IP literal, in every spelling a resolver would accept:
// dotted quad, inet_aton's short and numeric forms ("127.1", "2130706433", "0x7f.1",
// "0177.0.0.1"), and IPv6 with or without brackets, including IPv4-mapped forms.
// nullopt when `host` is not an IP literal (a name to resolve).
std::optional<IpAddress> ParseIpLiteral(std::string_view host);

// False for every address of the non-public ranges of docs/api.md (loopback, private,
// link-local, CGNAT, documentation, benchmarking, multicast, reserved, 6to4, NAT64, ULA,
// and the IPv4-mapped forms of the IPv4 ones).
bool IsPublicAddress(const IpAddress& address);

}  // namespace webhookd
