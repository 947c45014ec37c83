#pragma once

// The formats webhookd checks (RFC 3339's full-date, full-time and date-time), parsed by
// hand: one pass over the text, no regular expression, whatever its length.

#include <string_view>

namespace webhookd::schema {

enum class Format { kNone, kDate, kTime, kDateTime };

// kNone for a format webhookd does not check (draft 7 leaves them optional).
Format FormatNamed(std::string_view name);

// `text` is of `format`; true for kNone.
bool MatchesFormat(Format format, std::string_view text);

// The name a refusal gives it ("date-time").
std::string_view FormatName(Format format);

}  // namespace webhookd::schema
