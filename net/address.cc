#include "net/address.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <memory>

namespace webhookd {
namespace {

// One part of an inet_aton address: decimal, 0x hex or leading-0 octal. nullopt on an
// empty part, a bad digit or a value above `max`.
std::optional<uint32_t> ParseAtonPart(std::string_view part, uint32_t max) {
  if (part.empty() || !std::isdigit(static_cast<unsigned char>(part.front()))) {
    return std::nullopt;
  }
  unsigned base = 10;
  if (part.size() >= 2 && part[0] == '0' && (part[1] == 'x' || part[1] == 'X')) {
    base = 16;
    part.remove_prefix(2);  // like inet_aton, a bare "0x" is zero
  } else if (part.size() >= 2 && part[0] == '0') {
    base = 8;
    part.remove_prefix(1);
  }
  uint64_t value = 0;
  for (char c : part) {
    unsigned digit;
    if (c >= '0' && c <= '9') {
      digit = static_cast<unsigned>(c - '0');
    } else if (c >= 'a' && c <= 'f') {
      digit = static_cast<unsigned>(c - 'a' + 10);
    } else if (c >= 'A' && c <= 'F') {
      digit = static_cast<unsigned>(c - 'A' + 10);
    } else {
      return std::nullopt;
    }
    if (digit >= base) return std::nullopt;
    value = value * base + digit;
    if (value > max) return std::nullopt;  // also stops before uint64 could overflow
  }
  return static_cast<uint32_t>(value);
}

// inet_aton's grammar: 1 to 4 parts, the last filling the remaining bytes.
std::optional<uint32_t> ParseAton(std::string_view text) {
  std::vector<std::string_view> parts;
  while (true) {
    const size_t dot = text.find('.');
    parts.push_back(text.substr(0, dot));
    if (dot == std::string_view::npos) break;
    text.remove_prefix(dot + 1);
    if (parts.size() == 4) return std::nullopt;
  }
  uint32_t address = 0;
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    const std::optional<uint32_t> byte = ParseAtonPart(parts[i], 0xff);
    if (!byte) return std::nullopt;
    address |= *byte << (8 * (3 - i));
  }
  const size_t rest_bytes = 4 - (parts.size() - 1);
  const uint32_t max = rest_bytes == 4 ? 0xffffffffu : (1u << (8 * rest_bytes)) - 1;
  const std::optional<uint32_t> last = ParseAtonPart(parts.back(), max);
  if (!last) return std::nullopt;
  return address | *last;
}

bool InV4(uint32_t a, uint32_t network, int prefix) {
  const uint32_t mask = prefix == 0 ? 0 : ~uint32_t{0} << (32 - prefix);
  return (a & mask) == (network & mask);
}

constexpr uint32_t V4Net(uint32_t a, uint32_t b, uint32_t c, uint32_t d) {
  return a << 24 | b << 16 | c << 8 | d;
}

bool IsPublicV4(uint32_t a) {
  struct Range {
    uint32_t network;
    int prefix;
  };
  static constexpr Range kNonPublic[] = {
      {V4Net(0, 0, 0, 0), 8},        // "this" network
      {V4Net(10, 0, 0, 0), 8},       // private
      {V4Net(100, 64, 0, 0), 10},    // CGNAT
      {V4Net(127, 0, 0, 0), 8},      // loopback
      {V4Net(169, 254, 0, 0), 16},   // link-local (and cloud metadata)
      {V4Net(172, 16, 0, 0), 12},    // private
      {V4Net(192, 0, 0, 0), 24},     // IETF protocol assignments
      {V4Net(192, 0, 2, 0), 24},     // TEST-NET-1
      {V4Net(192, 88, 99, 0), 24},   // 6to4 relay anycast
      {V4Net(192, 168, 0, 0), 16},   // private
      {V4Net(198, 18, 0, 0), 15},    // benchmarking
      {V4Net(198, 51, 100, 0), 24},  // TEST-NET-2
      {V4Net(203, 0, 113, 0), 24},   // TEST-NET-3
      {V4Net(224, 0, 0, 0), 4},      // multicast
      {V4Net(240, 0, 0, 0), 4},      // reserved, and broadcast
  };
  return std::none_of(std::begin(kNonPublic), std::end(kNonPublic),
                      [&](const Range& r) { return InV4(a, r.network, r.prefix); });
}

uint32_t EmbeddedV4(const std::array<uint8_t, 16>& b) {
  return uint32_t{b[12]} << 24 | uint32_t{b[13]} << 16 | uint32_t{b[14]} << 8 | b[15];
}

bool HasPrefix(const std::array<uint8_t, 16>& b, std::initializer_list<uint8_t> prefix) {
  return std::equal(prefix.begin(), prefix.end(), b.begin());
}

bool IsPublicV6(const std::array<uint8_t, 16>& b) {
  // ::ffff:a.b.c.d reaches the IPv4 address itself.
  if (HasPrefix(b, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff})) return IsPublicV4(EmbeddedV4(b));
  // Only 2000::/3 holds global unicast. Everything else is non-public: ::, ::1, the
  // deprecated IPv4-compatible ::a.b.c.d, 64:ff9b::/96 and 64:ff9b:1::/48 (NAT64),
  // 100::/64 (discard), fc00::/7 (ULA), fe80::/10 (link-local), fec0::/10, ff00::/8.
  if ((b[0] & 0xe0) != 0x20) return false;
  if (HasPrefix(b, {0x20, 0x01, 0x0d, 0xb8})) return false;  // 2001:db8::/32 documentation
  if (HasPrefix(b, {0x20, 0x02})) return false;              // 2002::/16 6to4
  if (HasPrefix(b, {0x20, 0x01, 0x00, 0x00})) return false;  // 2001::/32 Teredo
  if (b[0] == 0x3f && b[1] == 0xff && (b[2] & 0xf0) == 0) return false;  // 3fff::/20 doc
  return true;
}

}  // namespace

IpAddress IpAddress::V4(uint32_t host_order) {
  IpAddress a;
  a.bytes[0] = static_cast<uint8_t>(host_order >> 24);
  a.bytes[1] = static_cast<uint8_t>(host_order >> 16);
  a.bytes[2] = static_cast<uint8_t>(host_order >> 8);
  a.bytes[3] = static_cast<uint8_t>(host_order);
  return a;
}

IpAddress IpAddress::V6(const std::array<uint8_t, 16>& bytes) {
  IpAddress a;
  a.v6 = true;
  a.bytes = bytes;
  return a;
}

std::string IpAddress::ToString() const {
  char buffer[INET6_ADDRSTRLEN] = {};
  if (inet_ntop(v6 ? AF_INET6 : AF_INET, bytes.data(), buffer, sizeof buffer) == nullptr) {
    return "?";
  }
  return buffer;
}

std::optional<IpAddress> ParseIpLiteral(std::string_view host) {
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
    if (host.find(':') == std::string_view::npos) return std::nullopt;  // "[1.2.3.4]"
  }
  // inet_pton reads up to a NUL: "::1\0x" must not pass as ::1.
  if (host.empty() || host.find('\0') != std::string_view::npos) return std::nullopt;
  if (host.find(':') != std::string_view::npos) {
    if (host.size() > 64) return std::nullopt;  // longer than any IPv6 spelling
    // A zone id ("fe80::1%eth0") is refused: it names an interface, not a destination.
    std::array<uint8_t, 16> bytes{};
    if (inet_pton(AF_INET6, std::string(host).c_str(), bytes.data()) != 1) return std::nullopt;
    return IpAddress::V6(bytes);
  }
  if (const std::optional<uint32_t> v4 = ParseAton(host)) return IpAddress::V4(*v4);
  return std::nullopt;
}

bool IsPublicAddress(const IpAddress& address) {
  if (address.v6) return IsPublicV6(address.bytes);
  const auto& b = address.bytes;
  return IsPublicV4(uint32_t{b[0]} << 24 | uint32_t{b[1]} << 16 | uint32_t{b[2]} << 8 | b[3]);
}

}  // namespace webhookd
