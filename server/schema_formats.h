#pragma once

// The formats webhookd checks (RFC 3339's full-date, full-time and date-time; the network
// formats of schema_net_formats.h), parsed by hand: one pass over the text, no regular
// expression, whatever its length.

#include <string_view>

namespace webhookd::schema {

enum class Format {
  kNone,
  kDate,
  kTime,
  kDateTime,
  kEmail,
  kHostname,
  kIpv4,
  kIpv6,
  kUri,
  kUriReference,
  kUuid,
};

// kNone for a format webhookd does not check (draft 7 leaves them optional).
Format FormatNamed(std::string_view name);

// `text` is of `format`; true for kNone.
bool MatchesFormat(Format format, std::string_view text);

// The name a refusal gives it ("date-time"), and the standard it follows ("RFC 3339").
std::string_view FormatName(Format format);
std::string_view FormatStandard(Format format);

}  // namespace webhookd::schema
