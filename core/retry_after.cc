#include "core/retry_after.h"

#include <array>
#include <cctype>
#include <cstdint>

#include "base/strings.h"

namespace webhookd {
namespace {

// Larger delta-seconds are read as this (about 31 years): far beyond any cap, and far from
// overflowing a Duration.
constexpr int64_t kMaxDeltaSeconds = 1'000'000'000;

constexpr std::array<std::string_view, 12> kMonths = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                      "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
constexpr std::array<std::string_view, 7> kShortDays = {"Mon", "Tue", "Wed", "Thu",
                                                        "Fri", "Sat", "Sun"};
constexpr std::array<std::string_view, 7> kLongDays = {
    "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"};

// A cursor over the header value; every reader consumes only on success.
class Reader {
 public:
  explicit Reader(std::string_view text) : text_(text) {}
  bool Done() const { return pos_ == text_.size(); }

  bool Literal(std::string_view s) {
    if (text_.substr(pos_, s.size()) != s) return false;
    pos_ += s.size();
    return true;
  }
  bool Digits(size_t n, int& out) {
    if (pos_ + n > text_.size()) return false;
    int value = 0;
    for (size_t i = 0; i < n; ++i) {
      const char c = text_[pos_ + i];
      if (c < '0' || c > '9') return false;
      value = value * 10 + (c - '0');
    }
    pos_ += n;
    out = value;
    return true;
  }
  template <size_t N>
  bool OneOf(const std::array<std::string_view, N>& names, int& index) {
    for (size_t i = 0; i < N; ++i) {
      if (EqualsIgnoreCase(text_.substr(pos_, names[i].size()), names[i])) {
        pos_ += names[i].size();
        index = static_cast<int>(i);
        return true;
      }
    }
    return false;
  }
  // HH:MM:SS
  bool Time(int& h, int& m, int& s) {
    return Digits(2, h) && Literal(":") && Digits(2, m) && Literal(":") && Digits(2, s);
  }

 private:
  std::string_view text_;
  size_t pos_ = 0;
};

struct DateTime {
  int year, month, day, hour, minute, second;  // month 0-based
};

// "Sun, 06 Nov 1994 08:49:37 GMT"
std::optional<DateTime> ParseImfFixdate(std::string_view text) {
  Reader r(text);
  DateTime t;
  int ignored;
  if (r.OneOf(kShortDays, ignored) && r.Literal(", ") && r.Digits(2, t.day) && r.Literal(" ") &&
      r.OneOf(kMonths, t.month) && r.Literal(" ") && r.Digits(4, t.year) && r.Literal(" ") &&
      r.Time(t.hour, t.minute, t.second) && r.Literal(" GMT") && r.Done()) {
    return t;
  }
  return std::nullopt;
}

// "Sunday, 06-Nov-94 08:49:37 GMT"; the two-digit year is the most recent past year that
// is not more than 50 years in the future (RFC 9110 §5.6.7).
std::optional<DateTime> ParseRfc850(std::string_view text, int current_year) {
  Reader r(text);
  DateTime t;
  int ignored, yy;
  if (r.OneOf(kLongDays, ignored) && r.Literal(", ") && r.Digits(2, t.day) && r.Literal("-") &&
      r.OneOf(kMonths, t.month) && r.Literal("-") && r.Digits(2, yy) && r.Literal(" ") &&
      r.Time(t.hour, t.minute, t.second) && r.Literal(" GMT") && r.Done()) {
    t.year = current_year - current_year % 100 + yy;
    if (t.year > current_year + 50) t.year -= 100;
    return t;
  }
  return std::nullopt;
}

// "Sun Nov  6 08:49:37 1994"
std::optional<DateTime> ParseAsctime(std::string_view text) {
  Reader r(text);
  DateTime t;
  int ignored;
  if (!r.OneOf(kShortDays, ignored) || !r.Literal(" ") || !r.OneOf(kMonths, t.month) ||
      !r.Literal(" ")) {
    return std::nullopt;
  }
  if (!(r.Literal(" ") ? r.Digits(1, t.day) : r.Digits(2, t.day))) return std::nullopt;
  if (r.Literal(" ") && r.Time(t.hour, t.minute, t.second) && r.Literal(" ") &&
      r.Digits(4, t.year) && r.Done()) {
    return t;
  }
  return std::nullopt;
}

std::optional<Timestamp> ToTimestamp(const DateTime& t) {
  using namespace std::chrono;
  const year_month_day ymd{year(t.year), month(static_cast<unsigned>(t.month + 1)),
                           day(static_cast<unsigned>(t.day))};
  // 60 is a leap second, allowed by the grammar.
  if (!ymd.ok() || t.hour > 23 || t.minute > 59 || t.second > 60) return std::nullopt;
  return Timestamp(sys_days(ymd) + hours(t.hour) + minutes(t.minute) + seconds(t.second));
}

}  // namespace

std::optional<Duration> ParseRetryAfter(std::string_view value, Timestamp now) {
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
  while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
  if (value.empty()) return std::nullopt;

  if (value.find_first_not_of("0123456789") == std::string_view::npos) {
    int64_t seconds = 0;
    for (char c : value) {
      seconds = seconds * 10 + (c - '0');
      if (seconds > kMaxDeltaSeconds) {
        seconds = kMaxDeltaSeconds;
        break;
      }
    }
    return std::chrono::seconds(seconds);
  }

  const int current_year = static_cast<int>(
      std::chrono::year_month_day(std::chrono::floor<std::chrono::days>(now)).year());
  std::optional<DateTime> date = ParseImfFixdate(value);
  if (!date) date = ParseRfc850(value, current_year);
  if (!date) date = ParseAsctime(value);
  if (!date) return std::nullopt;
  const std::optional<Timestamp> at = ToTimestamp(*date);
  if (!at) return std::nullopt;
  if (*at <= now) return Duration::zero();
  return *at - now;
}

}  // namespace webhookd
