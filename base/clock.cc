#include "base/clock.h"

#include <cstdio>

namespace webhookd {
namespace {

// Reads exactly `n` decimal digits at `pos`, advancing it.
bool ReadDigits(std::string_view text, size_t& pos, size_t n, int& out) {
  if (pos + n > text.size()) return false;
  int value = 0;
  for (size_t i = 0; i < n; ++i) {
    const char c = text[pos + i];
    if (c < '0' || c > '9') return false;
    value = value * 10 + (c - '0');
  }
  pos += n;
  out = value;
  return true;
}

bool Expect(std::string_view text, size_t& pos, char c) {
  if (pos >= text.size() || text[pos] != c) return false;
  ++pos;
  return true;
}

}  // namespace

std::string FormatRfc3339(Timestamp t) {
  using namespace std::chrono;
  const auto day = floor<days>(t);
  const year_month_day ymd(day);
  const hh_mm_ss<microseconds> time(t - day);
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%04d-%02u-%02uT%02d:%02d:%02d.%06lldZ",
                static_cast<int>(ymd.year()), static_cast<unsigned>(ymd.month()),
                static_cast<unsigned>(ymd.day()), static_cast<int>(time.hours().count()),
                static_cast<int>(time.minutes().count()), static_cast<int>(time.seconds().count()),
                static_cast<long long>(time.subseconds().count()));
  return buffer;
}

std::optional<Timestamp> ParseRfc3339(std::string_view text) {
  using namespace std::chrono;
  size_t pos = 0;
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  if (!ReadDigits(text, pos, 4, year) || !Expect(text, pos, '-') ||
      !ReadDigits(text, pos, 2, month) || !Expect(text, pos, '-') ||
      !ReadDigits(text, pos, 2, day)) {
    return std::nullopt;
  }
  if (pos >= text.size() || (text[pos] != 'T' && text[pos] != 't')) return std::nullopt;
  ++pos;
  if (!ReadDigits(text, pos, 2, hour) || !Expect(text, pos, ':') ||
      !ReadDigits(text, pos, 2, minute) || !Expect(text, pos, ':') ||
      !ReadDigits(text, pos, 2, second)) {
    return std::nullopt;
  }
  int64_t micros = 0;
  if (pos < text.size() && text[pos] == '.') {
    ++pos;
    size_t digits = 0;
    int64_t scale = 100000;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
      if (digits >= 9) return std::nullopt;
      micros += (text[pos] - '0') * scale;  // digits beyond the 6th are truncated
      scale /= 10;
      ++digits;
      ++pos;
    }
    if (digits == 0) return std::nullopt;
  }
  int offset_minutes = 0;
  if (pos >= text.size()) return std::nullopt;
  if (text[pos] == 'Z' || text[pos] == 'z') {
    ++pos;
  } else if (text[pos] == '+' || text[pos] == '-') {
    const int sign = text[pos] == '-' ? -1 : 1;
    ++pos;
    int oh = 0, om = 0;
    if (!ReadDigits(text, pos, 2, oh) || !Expect(text, pos, ':') || !ReadDigits(text, pos, 2, om) ||
        oh > 23 || om > 59) {
      return std::nullopt;
    }
    offset_minutes = sign * (oh * 60 + om);
  } else {
    return std::nullopt;
  }
  if (pos != text.size()) return std::nullopt;

  const year_month_day ymd{std::chrono::year(year),
                           std::chrono::month(static_cast<unsigned>(month)),
                           std::chrono::day(static_cast<unsigned>(day))};
  if (!ymd.ok() || hour > 23 || minute > 59 || second > 59) return std::nullopt;
  const Timestamp local =
      sys_days(ymd) + hours(hour) + minutes(minute) + seconds(second) + microseconds(micros);
  // "12:00+02:00" is 10:00 UTC.
  return local - minutes(offset_minutes);
}

}  // namespace webhookd
