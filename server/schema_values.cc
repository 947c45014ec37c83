#include "server/schema_values.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <optional>
#include <system_error>

namespace webhookd::schema {
namespace {

using Json = nlohmann::json;

long double AsLongDouble(const Json& n) {
  if (n.is_number_unsigned()) return static_cast<long double>(n.get<uint64_t>());
  if (n.is_number_integer()) return static_cast<long double>(n.get<int64_t>());
  return static_cast<long double>(n.get<double>());
}

// The order of kinds: every number is one kind, whatever nlohmann stored.
int KindRank(const Json& j) {
  switch (j.type()) {
    case Json::value_t::null:
      return 0;
    case Json::value_t::boolean:
      return 1;
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
    case Json::value_t::number_float:
      return 2;
    case Json::value_t::string:
      return 3;
    case Json::value_t::array:
      return 4;
    case Json::value_t::object:
      return 5;
    default:
      return 6;
  }
}

// A number as the decimal it was written as, mantissa * 10^exponent, sign dropped: an
// integer as it is, a double as its shortest round-trip text (0.1 is 1e-1, not the binary
// fraction nearest it), which is how JSON Schema reads multipleOf.
struct Decimal {
  uint64_t mantissa = 0;
  int exponent = 0;
};

std::optional<Decimal> ToDecimal(const Json& n) {
  Decimal out;
  if (n.is_number_unsigned()) {
    out.mantissa = n.get<uint64_t>();
  } else if (n.is_number_integer()) {
    const int64_t i = n.get<int64_t>();
    out.mantissa = i < 0 ? 0 - static_cast<uint64_t>(i) : static_cast<uint64_t>(i);
  } else if (n.is_number_float()) {
    const double d = std::fabs(n.get<double>());
    if (!std::isfinite(d)) return std::nullopt;
    char text[64];
    const auto [end, ec] = std::to_chars(text, text + sizeof text, d);
    if (ec != std::errc()) return std::nullopt;
    // At most 17 significant digits, so the mantissa fits.
    bool fraction = false;
    const char* p = text;
    for (; p != end && *p != 'e'; ++p) {
      if (*p == '.') {
        fraction = true;
        continue;
      }
      out.mantissa = out.mantissa * 10 + static_cast<uint64_t>(*p - '0');
      if (fraction) --out.exponent;
    }
    if (p != end) {
      int e = 0;
      std::from_chars(p + 1 + (p[1] == '+' ? 1 : 0), end, e);
      out.exponent += e;
    }
  } else {
    return std::nullopt;
  }
  while (out.mantissa != 0 && out.mantissa % 10 == 0) {
    out.mantissa /= 10;
    ++out.exponent;
  }
  return out;
}

template <typename T>
int Sign(const T& a, const T& b) {
  return a < b ? -1 : (b < a ? 1 : 0);
}

}  // namespace

int CompareNumbers(const Json& a, const Json& b) {
  if (a.is_number_integer() && b.is_number_integer()) {
    // Signed against unsigned: a negative one is smaller, else compare magnitudes.
    const bool a_neg = !a.is_number_unsigned() && a.get<int64_t>() < 0;
    const bool b_neg = !b.is_number_unsigned() && b.get<int64_t>() < 0;
    if (a_neg != b_neg) return a_neg ? -1 : 1;
    if (a_neg) return Sign(a.get<int64_t>(), b.get<int64_t>());
    return Sign(a.get<uint64_t>(), b.get<uint64_t>());
  }
  return Sign(AsLongDouble(a), AsLongDouble(b));
}

int CompareValues(const Json& a, const Json& b) {
  const int ka = KindRank(a);
  const int kb = KindRank(b);
  if (ka != kb) return Sign(ka, kb);
  switch (a.type()) {
    case Json::value_t::boolean:
      return Sign(a.get<bool>(), b.get<bool>());
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
    case Json::value_t::number_float:
      return CompareNumbers(a, b);
    case Json::value_t::string:
      return Sign(a.get_ref<const std::string&>(), b.get_ref<const std::string&>());
    case Json::value_t::array: {
      const size_t n = std::min(a.size(), b.size());
      for (size_t i = 0; i < n; ++i) {
        if (int c = CompareValues(a[i], b[i]); c != 0) return c;
      }
      return Sign(a.size(), b.size());
    }
    case Json::value_t::object: {
      if (a.size() != b.size()) return Sign(a.size(), b.size());
      // nlohmann's objects are maps ordered by key.
      for (auto ia = a.begin(), ib = b.begin(); ia != a.end(); ++ia, ++ib) {
        if (int c = ia.key().compare(ib.key()); c != 0) return c < 0 ? -1 : 1;
        if (int c = CompareValues(ia.value(), ib.value()); c != 0) return c;
      }
      return 0;
    }
    default:
      return 0;
  }
}

bool IsIntegerValue(const Json& number) {
  if (number.is_number_integer()) return true;
  if (!number.is_number_float()) return false;
  const double d = number.get<double>();
  return std::isfinite(d) && std::trunc(d) == d;
}

bool IsMultipleOf(const Json& value, const Json& divisor) {
  const std::optional<Decimal> v = ToDecimal(value);
  const std::optional<Decimal> d = ToDecimal(divisor);
  if (!v || !d || d->mantissa == 0) return false;
  if (v->mantissa == 0) return true;
  // v / d = (mv / md) * 10^(ev - ed): an integer when md divides mv * 10^(ev - ed).
  if (v->exponent >= d->exponent) {
    using Wide = unsigned __int128;
    const uint64_t m = d->mantissa;
    Wide power = 1 % m;
    Wide base = 10 % m;
    for (int k = v->exponent - d->exponent; k > 0; k >>= 1) {
      if ((k & 1) != 0) power = power * base % m;
      base = base * base % m;
    }
    return static_cast<Wide>(v->mantissa % m) * power % m == 0;
  }
  // Else md * 10^(ed - ev) must divide mv, which it cannot once it is larger.
  uint64_t m = d->mantissa;
  for (int k = d->exponent - v->exponent; k > 0; --k) {
    if (m > v->mantissa / 10) return false;
    m *= 10;
  }
  return v->mantissa % m == 0;
}

size_t CodePoints(std::string_view text) {
  size_t n = 0;
  for (unsigned char c : text) n += (c & 0xC0) != 0x80;
  return n;
}

}  // namespace webhookd::schema
