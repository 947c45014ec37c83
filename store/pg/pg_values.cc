#include "store/pg/pg_values.h"

#include <cstdio>
#include <stdexcept>

namespace webhookd::pg {

Params& Params::Add(std::string value) {
  storage_.push_back(std::move(value));
  pointers_.push_back(storage_.back().c_str());
  return *this;
}

Params& Params::Add(Timestamp value) { return Add(FormatRfc3339(value)); }

Params& Params::AddNull() {
  pointers_.push_back(nullptr);
  return *this;
}

void ArrayLiteral::AddRaw(std::string_view raw) {
  if (!empty_) text_ += ',';
  empty_ = false;
  text_ += raw;
}

void ArrayLiteral::Add(std::string_view element) {
  std::string quoted = "\"";
  for (char c : element) {
    if (c == '"' || c == '\\') quoted += '\\';
    quoted += c;
  }
  quoted += '"';
  AddRaw(quoted);
}

void ArrayLiteral::Add(Timestamp element) { Add(std::string_view(FormatRfc3339(element))); }

void ArrayLiteral::Add(double element) {
  // %.17g round-trips a double exactly, so a test can predict what SQL computes from it.
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", element);
  AddRaw(buf);
}

Timestamp ToTimestamp(const pqxx::field& field) {
  // PostgreSQL writes "2026-11-21 12:34:56.123456+00" in the UTC session zone.
  std::string text = field.c_str();
  if (auto space = text.find(' '); space != std::string::npos) text[space] = 'T';
  if (text.ends_with("+00")) text.replace(text.size() - 3, 3, "Z");
  const auto parsed = ParseRfc3339(text);
  if (!parsed) throw std::runtime_error("unexpected timestamp from PostgreSQL: " + text);
  return *parsed;
}

std::optional<Timestamp> ToOptionalTimestamp(const pqxx::field& field) {
  if (field.is_null()) return std::nullopt;
  return ToTimestamp(field);
}

std::optional<int> ToOptionalInt(const pqxx::field& field) {
  if (field.is_null()) return std::nullopt;
  return field.as<int>();
}

std::optional<std::string> ToOptionalString(const pqxx::field& field) {
  if (field.is_null()) return std::nullopt;
  return std::string(field.c_str(), field.size());
}

}  // namespace webhookd::pg
