#include "server/schema_formats.h"

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

// full-time: HH:MM:SS[.frac](Z|+HH:MM|-HH:MM), second 60 allowed (a leap second).
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
  if (text[at] == 'Z' || text[at] == 'z') {
    ++at;
    return true;
  }
  if (text[at] != '+' && text[at] != '-') return false;
  ++at;
  int offset_hour = 0, offset_minute = 0;
  return Digits(text, at, 2, offset_hour) && Char(text, at, ':') &&
         Digits(text, at, 2, offset_minute) && offset_hour <= 23 && offset_minute <= 59;
}

}  // namespace

Format FormatNamed(std::string_view name) {
  if (name == "date") return Format::kDate;
  if (name == "time") return Format::kTime;
  if (name == "date-time") return Format::kDateTime;
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
  }
  return false;
}

}  // namespace webhookd::schema
