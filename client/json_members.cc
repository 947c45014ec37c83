#include "client/json_members.h"

#include <nlohmann/json.hpp>

namespace webhookd::client {
namespace {

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

void SkipSpace(std::string_view text, size_t& i) {
  while (i < text.size() && IsSpace(text[i])) ++i;
}

// Moves `i` past the string literal that starts at it.
void SkipString(std::string_view text, size_t& i) {
  for (++i; i < text.size() && text[i] != '"'; ++i) {
    if (text[i] == '\\') ++i;
  }
  ++i;
}

// Moves `i` past the value that starts at it.
void SkipValue(std::string_view text, size_t& i) {
  if (text[i] == '"') {
    SkipString(text, i);
    return;
  }
  if (text[i] == '{' || text[i] == '[') {
    int depth = 0;
    while (i < text.size()) {
      const char c = text[i];
      if (c == '"') {
        SkipString(text, i);
        continue;
      }
      if (c == '{' || c == '[') ++depth;
      if (c == '}' || c == ']') --depth;
      ++i;
      if (depth == 0) return;
    }
    return;
  }
  // A number or a literal runs to the next separator.
  while (i < text.size() && text[i] != ',' && text[i] != '}' && text[i] != ']' && !IsSpace(text[i]))
    ++i;
}

}  // namespace

std::optional<std::map<std::string, std::string_view>> TopLevelMembers(std::string_view text) {
  // Validating first lets the scan below trust the syntax.
  if (!nlohmann::json::accept(text)) return std::nullopt;
  size_t i = 0;
  SkipSpace(text, i);
  if (i == text.size() || text[i] != '{') return std::nullopt;
  ++i;
  std::map<std::string, std::string_view> members;
  while (true) {
    SkipSpace(text, i);
    if (text[i] == '}') break;
    const size_t key_start = i;
    SkipString(text, i);
    // The key may hold escapes ("\u0070ayload"): let the JSON library decode it.
    const std::string key =
        nlohmann::json::parse(text.substr(key_start, i - key_start)).get<std::string>();
    SkipSpace(text, i);
    ++i;  // ':'
    SkipSpace(text, i);
    const size_t value_start = i;
    SkipValue(text, i);
    members[key] = text.substr(value_start, i - value_start);
    SkipSpace(text, i);
    if (text[i] == ',') ++i;
  }
  return members;
}

}  // namespace webhookd::client
