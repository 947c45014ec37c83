#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "base/result.h"

namespace webhookd {

inline constexpr size_t kMaxUrlLength = 2048;

struct Url {
  std::string scheme;  // "http" or "https", lowercase
  std::string host;    // lowercase; IPv6 literals without brackets
  int port = 0;        // explicit or the scheme's default
  std::string target;  // path and query, at least "/"; the fragment is dropped
};

// What refuses a URL's text whatever its scheme: over kMaxUrlLength characters, or a
// whitespace, control or non-ASCII character (kInvalid). nullopt: neither.
std::optional<Error> RefuseUrlText(std::string_view text);

struct HostPort {
  std::string host;  // lowercase; IPv6 literals without brackets
  int port = 0;
  bool operator==(const HostPort&) const = default;
};

// `host[:port]` or `[v6]:port` of a URL (no user-info), the port `default_port` when
// absent. kInvalid with a reason otherwise.
Result<HostPort> ParseAuthority(std::string_view authority, int default_port);

// An absolute http or https URL with a host, at most kMaxUrlLength characters, no
// user-info, no whitespace or control characters. kInvalid with a reason otherwise.
Result<Url> ParseUrl(std::string_view text);

}  // namespace webhookd
