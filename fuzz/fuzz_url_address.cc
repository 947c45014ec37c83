// Fuzzes the SSRF guard's inputs: ParseUrl, ParseIpLiteral, IsPublicAddress and VetHost
// with a scripted resolver (never real DNS).
#include <arpa/inet.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/fuzz_check.h"
#include "net/resolver.h"
#include "net/url.h"

namespace {

using webhookd::IpAddress;

IpAddress V6(std::initializer_list<uint8_t> bytes) {
  std::array<uint8_t, 16> b{};
  size_t i = 0;
  for (uint8_t x : bytes) b[i++] = x;
  return IpAddress::V6(b);
}

// Answers every name with one of a few fixed address sets, picked by the name's length, and
// checks that VetHost only ever asks it about plain names.
class FakeResolver final : public webhookd::Resolver {
 public:
  explicit FakeResolver(bool allow_private) : allow_private_(allow_private) {}

  webhookd::Result<std::vector<IpAddress>> Resolve(const std::string& host) override {
    ++calls;
    FUZZ_CHECK(!host.empty());
    FUZZ_CHECK(!webhookd::ParseIpLiteral(host).has_value());
    FUZZ_CHECK(host.find_first_of(":%[]/@ ") == std::string::npos);
    if (!allow_private_) {
      std::string lower;
      for (char c : host) lower += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
      if (!lower.empty() && lower.back() == '.') lower.pop_back();
      FUZZ_CHECK(lower != "localhost");
      FUZZ_CHECK(!lower.ends_with(".localhost"));
    }
    switch (host.size() % 6) {
      case 0:
        return std::vector<IpAddress>{IpAddress::V4(0x5db8d822)};  // 93.184.216.34
      case 1:
        return std::vector<IpAddress>{IpAddress::V4(0x5db8d822),
                                      V6({0x26, 0x06, 0x28, 0x00, 0x02, 0x20, 0, 1})};
      case 2:  // one private answer among public ones
        return std::vector<IpAddress>{IpAddress::V4(0x5db8d822), IpAddress::V4(0x0a000001)};
      case 3:  // cloud metadata, and the IPv4-mapped loopback
        return std::vector<IpAddress>{IpAddress::V4(0xa9fea9fe),
                                      V6({0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 127, 0, 0, 1})};
      case 4:
        return std::vector<IpAddress>{};  // resolves to nothing
      default:
        return webhookd::Fail(webhookd::ErrorKind::kInvalid, "NXDOMAIN");
    }
  }

  int calls = 0;

 private:
  bool allow_private_;
};

void CheckAddress(const IpAddress& address) {
  const bool is_public = webhookd::IsPublicAddress(address);
  // Printing and reading an address back gives the same address.
  const std::optional<IpAddress> again = webhookd::ParseIpLiteral(address.ToString());
  FUZZ_CHECK(again.has_value());
  FUZZ_CHECK(*again == address);
  if (!address.v6) {
    FUZZ_CHECK(address.bytes[4] == 0 && address.bytes[15] == 0);
    // ::ffff:a.b.c.d is the IPv4 address itself and must be judged the same.
    std::array<uint8_t, 16> mapped{};
    mapped[10] = mapped[11] = 0xff;
    for (int i = 0; i < 4; ++i) mapped[12 + i] = address.bytes[i];
    FUZZ_CHECK(webhookd::IsPublicAddress(IpAddress::V6(mapped)) == is_public);
    const uint8_t first = address.bytes[0];
    if (first == 0 || first == 10 || first == 127 || first >= 224) FUZZ_CHECK(!is_public);
  } else {
    // Outside ::ffff:0:0/96 (judged as IPv4, above), only 2000::/3 can be public.
    const std::array<uint8_t, 12> mapped_prefix = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    const bool mapped =
        std::equal(mapped_prefix.begin(), mapped_prefix.end(), address.bytes.begin());
    if (!mapped && (address.bytes[0] & 0xe0) != 0x20) FUZZ_CHECK(!is_public);
    if (mapped) {
      const uint32_t v4 = uint32_t{address.bytes[12]} << 24 | uint32_t{address.bytes[13]} << 16 |
                          uint32_t{address.bytes[14]} << 8 | address.bytes[15];
      FUZZ_CHECK(webhookd::IsPublicAddress(IpAddress::V4(v4)) == is_public);
    }
  }
}

// For dotted numbers, ParseIpLiteral reads what glibc's resolver reads as an address
// (inet_aton; getaddrinfo uses its exact form, the same on these characters). One
// deliberate difference: a bare "0x" part is zero here (BSD) and refused by glibc.
void CheckAgainstInetAton(std::string_view host) {
  if (host.empty() || host.find_first_not_of("0123456789abcdefABCDEFxX.") != host.npos) return;
  std::string_view rest = host;
  while (true) {
    const size_t dot = rest.find('.');
    const std::string_view part = rest.substr(0, dot);
    if (part == "0x" || part == "0X") return;
    if (dot == std::string_view::npos) break;
    rest.remove_prefix(dot + 1);
  }
  in_addr glibc{};
  const bool glibc_ok = inet_aton(std::string(host).c_str(), &glibc) != 0;
  const std::optional<IpAddress> ours = webhookd::ParseIpLiteral(host);
  FUZZ_CHECK(ours.has_value() == glibc_ok);
  if (ours) FUZZ_CHECK(*ours == IpAddress::V4(ntohl(glibc.s_addr)));
}

void CheckVetHost(std::string_view host) {
  for (const bool allow_private : {false, true}) {
    FakeResolver resolver(allow_private);
    const webhookd::Result<std::vector<IpAddress>> vetted =
        webhookd::VetHost(host, resolver, allow_private);
    FUZZ_CHECK(resolver.calls <= 1);
    if (!vetted) {
      FUZZ_CHECK(vetted.error().kind == webhookd::ErrorKind::kInvalid ||
                 vetted.error().kind == webhookd::ErrorKind::kForbidden);
      continue;
    }
    FUZZ_CHECK(!vetted->empty());
    if (!allow_private) {
      for (const IpAddress& address : *vetted) FUZZ_CHECK(webhookd::IsPublicAddress(address));
    }
    if (const std::optional<IpAddress> literal = webhookd::ParseIpLiteral(host)) {
      FUZZ_CHECK(resolver.calls == 0);
      FUZZ_CHECK(vetted->size() == 1 && vetted->front() == *literal);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);

  const webhookd::Result<webhookd::Url> url = webhookd::ParseUrl(text);
  if (url) {
    FUZZ_CHECK(url->scheme == "http" || url->scheme == "https");
    FUZZ_CHECK(url->port >= 1 && url->port <= 65535);
    FUZZ_CHECK(!url->host.empty());
    FUZZ_CHECK(url->target.starts_with('/'));
    FUZZ_CHECK(url->target.find('#') == std::string::npos);
    for (char c : url->host) FUZZ_CHECK(!(c >= 'A' && c <= 'Z'));
    for (char c : url->host + url->target) {
      FUZZ_CHECK(static_cast<unsigned char>(c) > 0x20 && static_cast<unsigned char>(c) < 0x7f);
    }
    if (const std::optional<IpAddress> address = webhookd::ParseIpLiteral(url->host)) {
      CheckAddress(*address);
    }
    CheckVetHost(url->host);
  } else {
    FUZZ_CHECK(url.error().kind == webhookd::ErrorKind::kInvalid);
  }

  // The raw bytes as a host, as a resolver answer or a Host header might carry them.
  if (const std::optional<IpAddress> address = webhookd::ParseIpLiteral(text)) {
    // Only address characters: nothing after a NUL may be ignored.
    FUZZ_CHECK(text.find('\0') == std::string_view::npos);
    CheckAddress(*address);
  }
  CheckAgainstInetAton(text);
  CheckVetHost(text);
  return 0;
}
