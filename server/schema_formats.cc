#include "server/schema_formats.h"

#include "server/schema_net_formats.h"

namespace webhookd::schema {
namespace {

// Reads exactly `n` digits at `at`, advancing it.
bool Digits(std::string_view text, size_t& at, size_t n, int& value) {
  if (text.size() - at < n) return false;
  value = 0;
  for (size_t i = 0; i < n; ++i) {
    const char c = text[at + i];
    if (c < '0' || c > '9') return false;
    value = value * 10 + (c - '0');
  }
  at += n;
  return true;
}

bool Char(std::string_view text, size_t& at, char c) {
  if (at >= text.size() || text[at] != c) return false;
  ++at;
  return true;
}

bool IsLeapYear(int y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

// full-date: YYYY-MM-DD, the day within its month (29 February in leap years alone).
bool FullDate(std::string_view text, size_t& at) {
  int year = 0, month = 0, day = 0;
  if (!Digits(text, at, 4, year) || !Char(text, at, '-') || !Digits(text, at, 2, month) ||
      !Char(text, at, '-') || !Digits(text, at, 2, day)) {
    return false;
  }
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (month < 1 || month > 12 || day < 1) return false;
  const int last = kDays[month - 1] + (month == 2 && IsLeapYear(year) ? 1 : 0);
  return day <= last;
}

// full-time: HH:MM:SS[.frac](Z|+HH:MM|-HH:MM). Second 60 is a leap second, which comes
// only at 23:59 UTC: 15:59:60-08:00 is one, 23:58:60Z is not.
bool FullTime(std::string_view text, size_t& at) {
  int hour = 0, minute = 0, second = 0;
  if (!Digits(text, at, 2, hour) || !Char(text, at, ':') || !Digits(text, at, 2, minute) ||
      !Char(text, at, ':') || !Digits(text, at, 2, second)) {
    return false;
  }
  if (hour > 23 || minute > 59 || second > 60) return false;
  if (at < text.size() && text[at] == '.') {
    ++at;
    const size_t start = at;
    while (at < text.size() && text[at] >= '0' && text[at] <= '9') ++at;
    if (at == start) return false;
  }
  if (at >= text.size()) return false;
  int offset = 0;  // minutes east of UTC
  if (text[at] == 'Z' || text[at] == 'z') {
    ++at;
  } else {
    if (text[at] != '+' && text[at] != '-') return false;
    const int sign = text[at] == '-' ? -1 : 1;
    ++at;
    int offset_hour = 0, offset_minute = 0;
    if (!Digits(text, at, 2, offset_hour) || !Char(text, at, ':') ||
        !Digits(text, at, 2, offset_minute) || offset_hour > 23 || offset_minute > 59) {
      return false;
    }
    offset = sign * (offset_hour * 60 + offset_minute);
  }
  constexpr int kDay = 24 * 60;
  return second < 60 || ((hour * 60 + minute - offset) % kDay + kDay) % kDay == kDay - 1;
}

}  // namespace

Format FormatNamed(std::string_view name) {
  if (name == "date") return Format::kDate;
  if (name == "time") return Format::kTime;
  if (name == "date-time") return Format::kDateTime;
  if (name == "email") return Format::kEmail;
  if (name == "hostname") return Format::kHostname;
  if (name == "ipv4") return Format::kIpv4;
  if (name == "ipv6") return Format::kIpv6;
  if (name == "uri") return Format::kUri;
  if (name == "uri-reference") return Format::kUriReference;
  if (name == "uuid") return Format::kUuid;
  return Format::kNone;
}

std::string_view FormatName(Format format) {
  switch (format) {
    case Format::kDate:
      return "date";
    case Format::kTime:
      return "time";
    case Format::kDateTime:
      return "date-time";
    case Format::kEmail:
      return "email";
    case Format::kHostname:
      return "hostname";
    case Format::kIpv4:
      return "ipv4";
    case Format::kIpv6:
      return "ipv6";
    case Format::kUri:
      return "uri";
    case Format::kUriReference:
      return "uri-reference";
    case Format::kUuid:
      return "uuid";
    case Format::kNone:
      break;
  }
  return "";
}

std::string_view FormatStandard(Format format) {
  switch (format) {
    case Format::kDate:
    case Format::kTime:
    case Format::kDateTime:
      return "RFC 3339";
    case Format::kEmail:
      return "RFC 5321";
    case Format::kHostname:
      return "RFC 1123";
    case Format::kIpv4:
      return "dotted decimal";
    case Format::kIpv6:
      return "RFC 4291";
    case Format::kUri:
    case Format::kUriReference:
      return "RFC 3986";
    case Format::kUuid:
      return "RFC 4122";
    case Format::kNone:
      break;
  }
  return "";
}

bool MatchesFormat(Format format, std::string_view text) {
  size_t at = 0;
  switch (format) {
    case Format::kNone:
      return true;
    case Format::kDate:
      return FullDate(text, at) && at == text.size();
    case Format::kTime:
      return FullTime(text, at) && at == text.size();
    case Format::kDateTime:
      return FullDate(text, at) && at < text.size() && (text[at] == 'T' || text[at] == 't') &&
             FullTime(text, ++at) && at == text.size();
    case Format::kEmail:
      return IsEmail(text);
    case Format::kHostname:
      return IsHostname(text);
    case Format::kIpv4:
      return IsIpv4(text);
    case Format::kIpv6:
      return IsIpv6(text);
    case Format::kUri:
      return IsUri(text);
    case Format::kUriReference:
      return IsUriReference(text);
    case Format::kUuid:
      return IsUuid(text);
  }
  return false;
}

}  // namespace webhookd::schema
