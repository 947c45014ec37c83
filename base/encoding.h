#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace webhookd {

std::string Base64Encode(std::string_view bytes);
// Standard alphabet with padding; nullopt on any other character or bad length.
std::optional<std::string> Base64Decode(std::string_view text);

std::string HexEncode(std::string_view bytes);

// SHA-256 of `bytes`, raw 32 bytes.
std::string Sha256(std::string_view bytes);

// True when `text` is well-formed UTF-8 (no overlongs, no surrogates).
bool IsValidUtf8(std::string_view text);

// Replaces invalid UTF-8 sequences and NUL bytes with U+FFFD so the text can be
// stored and served as JSON.
std::string SanitizeUtf8(std::string_view bytes);

// Appends `text` as a JSON string literal (quotes, escapes; invalid UTF-8 replaced by
// U+FFFD, so the result is always valid JSON).
void AppendJsonString(std::string& out, std::string_view text);
std::string JsonQuote(std::string_view text);

}  // namespace webhookd
