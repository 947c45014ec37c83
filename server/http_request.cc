#include "server/http_request.h"

#include <optional>

#include "base/strings.h"

namespace webhookd {

namespace {

std::optional<int> HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return std::nullopt;
}

// %XX escapes; in a query '+' is a space too. A '%' without two hex digits stays as it
// is, as browsers and curl leave it.
std::string Decode(std::string_view in, bool plus_is_space) {
  std::string out;
  out.reserve(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    const char c = in[i];
    if (c == '%' && i + 2 < in.size()) {
      const auto hi = HexDigit(in[i + 1]);
      const auto lo = HexDigit(in[i + 2]);
      if (hi && lo) {
        out.push_back(static_cast<char>(*hi * 16 + *lo));
        i += 2;
        continue;
      }
    }
    out.push_back(c == '+' && plus_is_space ? ' ' : c);
  }
  return out;
}

}  // namespace

std::string HttpRequest::Header(std::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (EqualsIgnoreCase(key, name)) return value;
  }
  return "";
}

bool HttpRequest::HasHeader(std::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (EqualsIgnoreCase(key, name)) return true;
  }
  return false;
}

bool ParseTarget(std::string_view target, std::string* path,
                 std::multimap<std::string, std::string>* params) {
  if (target.empty() || target.front() != '/') return false;
  const size_t q = target.find('?');
  *path = Decode(target.substr(0, q), false);
  params->clear();
  if (q == std::string_view::npos) return true;
  std::string_view query = target.substr(q + 1);
  while (!query.empty()) {
    const size_t amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    query.remove_prefix(amp == std::string_view::npos ? query.size() : amp + 1);
    if (pair.empty()) continue;
    const size_t eq = pair.find('=');
    params->emplace(Decode(pair.substr(0, eq), true),
                    eq == std::string_view::npos ? "" : Decode(pair.substr(eq + 1), true));
  }
  return true;
}

}  // namespace webhookd
