#include "core/validation.h"

#include <algorithm>
#include <cctype>

#include "base/encoding.h"
#include "base/strings.h"

namespace webhookd {
namespace {

bool IsTypeChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == ':' ||
         c == '-';
}

bool IsTokenChar(char c) {
  static constexpr std::string_view kExtra = "!#$%&'*+-.^_`|~";
  return std::isalnum(static_cast<unsigned char>(c)) || kExtra.find(c) != std::string_view::npos;
}

}  // namespace

bool IsValidEventType(std::string_view type) {
  return !type.empty() && type.size() <= kMaxEventTypeLength &&
         std::all_of(type.begin(), type.end(), IsTypeChar);
}

bool IsValidOrderingKey(std::string_view key) {
  if (key.empty() || !IsValidUtf8(key)) return false;
  size_t characters = 0;
  for (char c : key) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) return false;
    if ((u & 0xC0) != 0x80) ++characters;  // not a continuation byte: a new character
  }
  return characters <= 255;
}

bool IsValidSubject(std::string_view subject) {
  if (subject.empty() || subject.size() > kMaxSubjectBytes || !IsValidUtf8(subject)) return false;
  for (size_t i = 0; i < subject.size(); ++i) {
    const auto u = static_cast<unsigned char>(subject[i]);
    if (u < 0x20 || u == 0x7f) return false;
    // U+0080 to U+009F, the C1 controls, are 0xC2 0x80 to 0xC2 0x9F in UTF-8.
    if (u == 0xC2 && i + 1 < subject.size() && static_cast<unsigned char>(subject[i + 1]) <= 0x9F) {
      return false;
    }
  }
  return true;
}

bool IsValidTenantId(std::string_view tenant_id) {
  return !tenant_id.empty() && tenant_id.size() <= kMaxTenantIdLength &&
         std::all_of(tenant_id.begin(), tenant_id.end(), IsTypeChar);
}

bool IsReservedEventType(std::string_view type) { return type.starts_with("webhookd."); }

bool IsValidEventTypePattern(std::string_view pattern) {
  if (pattern.ends_with(".*")) {
    const std::string_view prefix = pattern.substr(0, pattern.size() - 2);
    return IsValidEventType(prefix) && pattern.size() <= kMaxEventTypeLength;
  }
  return IsValidEventType(pattern);
}

bool IsValidHeaderName(std::string_view name) {
  return !name.empty() && name.size() <= 256 && std::all_of(name.begin(), name.end(), IsTokenChar);
}

bool IsValidHeaderValue(std::string_view value) {
  return value.size() <= 4096 && std::all_of(value.begin(), value.end(), [](char c) {
           const auto u = static_cast<unsigned char>(c);
           return u == '\t' || (u >= 0x20 && u < 0x7f);
         });
}

bool IsReservedHeader(std::string_view name) {
  if (name.size() >= 8 && EqualsIgnoreCase(name.substr(0, 8), "webhook-")) return true;
  for (std::string_view reserved : {"content-type", "content-length", "host", "user-agent",
                                    "transfer-encoding", "connection"}) {
    if (EqualsIgnoreCase(name, reserved)) return true;
  }
  return false;
}

bool IsValidIdempotencyKey(std::string_view key) {
  return !key.empty() && key.size() <= kMaxIdempotencyKeyLength &&
         std::all_of(key.begin(), key.end(), [](char c) {
           const auto u = static_cast<unsigned char>(c);
           return u > 0x20 && u < 0x7f;
         });
}

int JsonDepth(std::string_view json, int limit) {
  int depth = 0;
  int deepest = 0;
  bool in_string = false;
  for (size_t i = 0; i < json.size(); ++i) {
    const char c = json[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
      if (deepest > limit) return deepest;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return deepest;
}

}  // namespace webhookd
