#include "net/url.h"

#include <arpa/inet.h>

#include <cctype>
#include <optional>

#include "base/strings.h"

namespace webhookd {
namespace {

bool IsHostChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_';
}

std::optional<int> ParsePort(std::string_view text) {
  const auto port = ParseBoundedInt(text, 1, 65535);
  if (!port) return std::nullopt;
  return static_cast<int>(*port);
}

}  // namespace

Result<HostPort> ParseAuthority(std::string_view authority, int default_port) {
  HostPort out;
  out.port = default_port;
  std::string_view host;
  std::optional<std::string_view> port_text;
  if (authority.starts_with("[")) {
    const size_t close = authority.find(']');
    if (close == std::string_view::npos) return Fail(ErrorKind::kInvalid, "URL host is invalid");
    host = authority.substr(1, close - 1);
    const std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return Fail(ErrorKind::kInvalid, "URL host is invalid");
      port_text = after.substr(1);
    }
    in6_addr ignored;
    if (host.empty() || inet_pton(AF_INET6, std::string(host).c_str(), &ignored) != 1) {
      return Fail(ErrorKind::kInvalid, "URL host is not a valid IPv6 address");
    }
  } else {
    const size_t port_colon = authority.find(':');
    host = authority.substr(0, port_colon);
    if (port_colon != std::string_view::npos) port_text = authority.substr(port_colon + 1);
    if (host.empty()) return Fail(ErrorKind::kInvalid, "URL has no host");
    for (char c : host) {
      if (!IsHostChar(c)) return Fail(ErrorKind::kInvalid, "URL host is invalid");
    }
  }
  if (port_text) {
    const std::optional<int> port = ParsePort(*port_text);
    if (!port) return Fail(ErrorKind::kInvalid, "URL port must be 1..65535");
    out.port = *port;
  }
  out.host = Lower(host);
  return out;
}

std::optional<Error> RefuseUrlText(std::string_view text) {
  if (text.size() > kMaxUrlLength)
    return Error{ErrorKind::kInvalid, "URL is longer than 2048 characters", {}};
  for (char c : text) {
    const auto b = static_cast<unsigned char>(c);
    if (b <= 0x20 || b >= 0x7f) {
      return Error{
          ErrorKind::kInvalid, "URL contains whitespace, control or non-ASCII characters", {}};
    }
  }
  return std::nullopt;
}

Result<Url> ParseUrl(std::string_view text) {
  if (auto refused = RefuseUrlText(text)) return std::unexpected(*refused);
  const size_t colon = text.find(':');
  if (colon == std::string_view::npos) {
    return Fail(ErrorKind::kInvalid, "URL must be absolute (http:// or https://)");
  }
  Url url;
  url.scheme = Lower(text.substr(0, colon));
  if (url.scheme == "http") {
    url.port = 80;
  } else if (url.scheme == "https") {
    url.port = 443;
  } else {
    return Fail(ErrorKind::kInvalid, "URL scheme must be http or https");
  }
  std::string_view rest = text.substr(colon + 1);
  if (!rest.starts_with("//")) {
    return Fail(ErrorKind::kInvalid, "URL must be absolute (http:// or https://)");
  }
  rest.remove_prefix(2);

  const size_t authority_end = rest.find_first_of("/?#");
  const std::string_view authority = rest.substr(0, authority_end);
  std::string_view target =
      authority_end == std::string_view::npos ? std::string_view() : rest.substr(authority_end);
  if (authority.find('@') != std::string_view::npos) {
    return Fail(ErrorKind::kInvalid, "URL must not contain user-info");
  }

  auto host = ParseAuthority(authority, url.port);
  if (!host) return std::unexpected(host.error());
  url.host = std::move(host->host);
  url.port = host->port;

  if (const size_t hash = target.find('#'); hash != std::string_view::npos) {
    target = target.substr(0, hash);
  }
  // Built char by char: GCC 12 misreports string concatenation here as an overlapping
  // memcpy (-Wrestrict, GCC bug 105329).
  url.target.reserve(target.size() + 1);
  if (!target.starts_with('/')) url.target.push_back('/');
  for (char c : target) url.target.push_back(c);
  return url;
}

}  // namespace webhookd
