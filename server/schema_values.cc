#include "server/schema_values.h"

#include <cmath>
#include <cstdint>

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
  if (value.is_number_integer() && divisor.is_number_integer()) {
    const uint64_t d = divisor.get<uint64_t>();  // > 0, checked at compile
    const uint64_t magnitude = value.is_number_unsigned() || value.get<int64_t>() >= 0
                                   ? value.get<uint64_t>()
                                   : 0 - static_cast<uint64_t>(value.get<int64_t>());
    return magnitude % d == 0;
  }
  const long double v = AsLongDouble(value);
  const long double d = AsLongDouble(divisor);
  if (!std::isfinite(v) || !std::isfinite(d) || d <= 0) return false;
  const long double q = v / d;
  if (!std::isfinite(q)) return false;
  const long double nearest = std::nearbyint(q);
  return std::fabs(v - nearest * d) <= d * 1e-9L;
}

size_t CodePoints(std::string_view text) {
  size_t n = 0;
  for (unsigned char c : text) n += (c & 0xC0) != 0x80;
  return n;
}

}  // namespace webhookd::schema
