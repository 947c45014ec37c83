#include "server/schema_net_formats.h"

#include <cstdint>
#include <string>

namespace webhookd::schema {
namespace {

bool IsAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsAlnum(char c) { return IsAlpha(c) || IsDigit(c); }
bool IsHex(char c) { return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
char Lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

// RFC 3492's decoder, enough to tell whether an A-label is Punycode and what its first
// four code points are. A label is at most 63 characters, so the work is bounded.
constexpr uint32_t kBase = 36, kTMin = 1, kTMax = 26, kSkew = 38, kDamp = 700;

uint32_t Adapt(uint32_t delta, uint32_t points, bool first) {
  delta = first ? delta / kDamp : delta / 2;
  delta += delta / points;
  uint32_t k = 0;
  while (delta > ((kBase - kTMin) * kTMax) / 2) {
    delta /= kBase - kTMin;
    k += kBase;
  }
  return k + (kBase - kTMin + 1) * delta / (delta + kSkew);
}

int PunycodeDigit(char c) {
  if (c >= 'a' && c <= 'z') return c - 'a';
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (IsDigit(c)) return c - '0' + 26;
  return -1;
}

// `in` is what follows "xn--": valid Punycode for a label that is not all ASCII and has
// no "--" in its third and fourth places (RFC 5891 4.2.3.1).
bool IsPunycodeLabel(std::string_view in) {
  std::u32string out;
  const size_t delimiter = in.rfind('-');
  size_t at = 0;
  if (delimiter != std::string_view::npos) {
    for (size_t i = 0; i < delimiter; ++i) out.push_back(static_cast<unsigned char>(in[i]));
    at = delimiter + 1;
  }
  if (at >= in.size()) return false;  // nothing encoded: an all-ASCII "A-label"
  constexpr uint32_t kMax = 0x7fffffff;
  uint32_t n = 128, i = 0, bias = 72;
  while (at < in.size()) {
    const uint32_t old_i = i;
    uint32_t w = 1;
    for (uint32_t k = kBase;; k += kBase) {
      if (at >= in.size()) return false;
      const int d = PunycodeDigit(in[at++]);
      if (d < 0) return false;
      const auto digit = static_cast<uint32_t>(d);
      if (digit > (kMax - i) / w) return false;
      i += digit * w;
      const uint32_t t = k <= bias ? kTMin : (k >= bias + kTMax ? kTMax : k - bias);
      if (digit < t) break;
      if (w > kMax / (kBase - t)) return false;
      w *= kBase - t;
    }
    const auto points = static_cast<uint32_t>(out.size() + 1);
    bias = Adapt(i - old_i, points, old_i == 0);
    if (i / points > kMax - n) return false;
    n += i / points;
    i %= points;
    if (n > 0x10ffff || (n >= 0xd800 && n <= 0xdfff)) return false;
    out.insert(out.begin() + i, static_cast<char32_t>(n));
    ++i;
  }
  return !(out.size() >= 4 && out[2] == U'-' && out[3] == U'-');
}

bool IsLabel(std::string_view label) {
  if (label.empty() || label.size() > 63 || label.front() == '-' || label.back() == '-') {
    return false;
  }
  for (char c : label) {
    if (!IsAlnum(c) && c != '-') return false;
  }
  if (label.size() >= 4 && label[2] == '-' && label[3] == '-') {
    return Lower(label[0]) == 'x' && Lower(label[1]) == 'n' && IsPunycodeLabel(label.substr(4));
  }
  return true;
}

bool IsUnreserved(char c) { return IsAlnum(c) || c == '-' || c == '.' || c == '_' || c == '~'; }
bool IsSubDelim(char c) {
  return c == '!' || c == '$' || c == '&' || c == '\'' || c == '(' || c == ')' || c == '*' ||
         c == '+' || c == ',' || c == ';' || c == '=';
}

// Every character unreserved, a sub-delim, one of `extra`, or a %XX.
bool UriChars(std::string_view text, std::string_view extra) {
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '%') {
      if (i + 2 >= text.size() || !IsHex(text[i + 1]) || !IsHex(text[i + 2])) return false;
      i += 2;
    } else if (!IsUnreserved(c) && !IsSubDelim(c) && extra.find(c) == std::string_view::npos) {
      return false;
    }
  }
  return true;
}

// The length of the scheme and its ':' at the start of `text`, or 0.
size_t SchemeLength(std::string_view text) {
  if (text.empty() || !IsAlpha(text[0])) return 0;
  for (size_t i = 1; i < text.size(); ++i) {
    const char c = text[i];
    if (c == ':') return i + 1;
    if (!IsAlnum(c) && c != '+' && c != '-' && c != '.') return 0;
  }
  return 0;
}

bool IsAuthority(std::string_view a) {
  const size_t at = a.find('@');
  if (at != std::string_view::npos) {
    if (!UriChars(a.substr(0, at), ":")) return false;
    a.remove_prefix(at + 1);
  }
  std::string_view port;
  if (!a.empty() && a[0] == '[') {
    const size_t close = a.find(']');
    if (close == std::string_view::npos) return false;
    const std::string_view literal = a.substr(1, close - 1);
    if (!literal.empty() && (literal[0] == 'v' || literal[0] == 'V')) {
      // IPvFuture: "v" 1*HEXDIG "." 1*( unreserved / sub-delims / ":" )
      const size_t dot = literal.find('.');
      if (dot == std::string_view::npos || dot < 2 || dot + 1 >= literal.size()) return false;
      for (size_t i = 1; i < dot; ++i) {
        if (!IsHex(literal[i])) return false;
      }
      for (char c : literal.substr(dot + 1)) {
        if (!IsUnreserved(c) && !IsSubDelim(c) && c != ':') return false;
      }
    } else if (!IsIpv6(literal)) {
      return false;
    }
    port = a.substr(close + 1);
  } else {
    const size_t colon = a.find(':');
    if (!UriChars(a.substr(0, colon), "")) return false;  // reg-name (an IPv4 address is one)
    port = colon == std::string_view::npos ? std::string_view() : a.substr(colon);
  }
  if (port.empty()) return true;
  if (port[0] != ':') return false;
  for (char c : port.substr(1)) {
    if (!IsDigit(c)) return false;
  }
  return true;
}

// What follows a scheme (hier-part), or a relative reference: [//authority]path[?query]
// [#fragment]. Without a scheme, the first segment of a relative path has no ':'.
bool IsReferenceBody(std::string_view text, bool has_scheme) {
  if (const size_t hash = text.find('#'); hash != std::string_view::npos) {
    if (!UriChars(text.substr(hash + 1), ":@/?")) return false;
    text = text.substr(0, hash);
  }
  if (const size_t question = text.find('?'); question != std::string_view::npos) {
    if (!UriChars(text.substr(question + 1), ":@/?")) return false;
    text = text.substr(0, question);
  }
  if (text.starts_with("//")) {
    text.remove_prefix(2);
    const size_t slash = text.find('/');
    if (!IsAuthority(text.substr(0, slash))) return false;
    text = slash == std::string_view::npos ? std::string_view() : text.substr(slash);
  } else if (!has_scheme) {
    const std::string_view first = text.substr(0, text.find('/'));
    if (first.find(':') != std::string_view::npos) return false;
  }
  return UriChars(text, ":@/");
}

}  // namespace

bool IsHostname(std::string_view text) {
  if (text.empty() || text.size() > 253) return false;
  for (size_t start = 0;;) {
    size_t end = text.find('.', start);
    if (end == std::string_view::npos) end = text.size();
    if (!IsLabel(text.substr(start, end - start))) return false;
    if (end == text.size()) return true;
    start = end + 1;
  }
}

bool IsIpv4(std::string_view text) {
  size_t at = 0;
  for (int part = 0; part < 4; ++part) {
    if (part > 0) {
      if (at >= text.size() || text[at] != '.') return false;
      ++at;
    }
    const size_t start = at;
    int value = 0;
    while (at < text.size() && IsDigit(text[at]) && at - start < 3) {
      value = value * 10 + (text[at] - '0');
      ++at;
    }
    const size_t digits = at - start;
    if (digits == 0 || value > 255 || (digits > 1 && text[start] == '0')) return false;
  }
  return at == text.size();
}

bool IsIpv6(std::string_view text) {
  if (text.size() < 2 || text.size() > 45) return false;
  int groups = 0;
  bool compressed = false;
  size_t i = 0;
  if (text.starts_with("::")) {
    compressed = true;
    i = 2;
    if (i == text.size()) return true;
  } else if (text[0] == ':') {
    return false;
  }
  for (;;) {
    size_t j = i;
    while (j < text.size() && IsHex(text[j]) && j - i < 5) ++j;
    if (j < text.size() && text[j] == '.') {  // the last 32 bits as an IPv4 address
      if (!IsIpv4(text.substr(i))) return false;
      groups += 2;
      break;
    }
    if (j == i || j - i > 4) return false;
    ++groups;
    i = j;
    if (i == text.size()) break;
    if (text[i] != ':') return false;
    ++i;
    if (i < text.size() && text[i] == ':') {
      if (compressed) return false;
      compressed = true;
      ++i;
      if (i == text.size()) break;
    } else if (i == text.size()) {
      return false;
    }
  }
  return compressed ? groups <= 7 : groups == 8;
}

bool IsEmail(std::string_view text) {
  size_t at = 0;
  if (!text.empty() && text[0] == '"') {
    // Quoted-string: qtextSMTP (32-126 but " and \) or a \-pair of 32-126.
    for (at = 1;; ++at) {
      if (at >= text.size()) return false;
      const auto c = static_cast<unsigned char>(text[at]);
      if (c == '"') break;
      if (c == '\\') {
        ++at;
        if (at >= text.size()) return false;
      }
      const auto d = static_cast<unsigned char>(text[at]);
      if (d < 32 || d > 126) return false;
    }
    ++at;
  } else {
    // Dot-string: atoms of atext, one dot between them.
    constexpr std::string_view kAtext = "!#$%&'*+-/=?^_`{|}~";
    bool atom_empty = true;
    for (; at < text.size() && text[at] != '@'; ++at) {
      const char c = text[at];
      if (c == '.') {
        if (atom_empty) return false;
        atom_empty = true;
      } else if (IsAlnum(c) || kAtext.find(c) != std::string_view::npos) {
        atom_empty = false;
      } else {
        return false;
      }
    }
    if (atom_empty) return false;
  }
  if (at > 64 || at >= text.size() || text[at] != '@') return false;
  const std::string_view domain = text.substr(at + 1);
  if (!domain.empty() && domain[0] == '[') {
    if (domain.back() != ']') return false;
    const std::string_view literal = domain.substr(1, domain.size() - 2);
    if (literal.size() > 5 && Lower(literal[0]) == 'i' && Lower(literal[1]) == 'p' &&
        Lower(literal[2]) == 'v' && literal[3] == '6' && literal[4] == ':') {
      return IsIpv6(literal.substr(5));
    }
    return IsIpv4(literal);
  }
  return IsHostname(domain);
}

bool IsUri(std::string_view text) {
  const size_t scheme = SchemeLength(text);
  return scheme > 0 && IsReferenceBody(text.substr(scheme), true);
}

bool IsUriReference(std::string_view text) {
  const size_t scheme = SchemeLength(text);
  if (scheme > 0) return IsReferenceBody(text.substr(scheme), true);
  return IsReferenceBody(text, false);
}

bool IsUuid(std::string_view text) {
  if (text.size() != 36) return false;
  for (size_t i = 0; i < text.size(); ++i) {
    const bool hyphen = i == 8 || i == 13 || i == 18 || i == 23;
    if (hyphen ? text[i] != '-' : !IsHex(text[i])) return false;
  }
  return true;
}

}  // namespace webhookd::schema
