#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <pqxx/pqxx>
#include <string>
#include <string_view>
#include <vector>

#include "base/clock.h"

namespace webhookd::pg {

// Positional parameters, any of them NULL; libpqxx 6.4 has no std::optional parameters.
class Params {
 public:
  Params& Add(std::string value);
  Params& Add(std::string_view value) { return Add(std::string(value)); }
  Params& Add(const char* value) { return Add(std::string(value)); }
  Params& Add(int64_t value) { return Add(std::to_string(value)); }
  Params& Add(int value) { return Add(std::to_string(value)); }
  Params& Add(bool value) { return Add(std::string(value ? "true" : "false")); }
  Params& Add(Timestamp value);
  Params& AddNull();
  template <typename T>
  Params& Add(const std::optional<T>& value) {
    return value ? Add(*value) : AddNull();
  }

  auto dynamic() const { return pqxx::prepare::make_dynamic_params(pointers_); }

 private:
  std::deque<std::string> storage_;  // a deque keeps the pointers below valid
  std::vector<const char*> pointers_;
};

// Array literals for unnest($n::type[]): elements quoted and escaped, NULL when absent.
class ArrayLiteral {
 public:
  void Add(std::string_view element);
  void Add(int64_t element) { AddRaw(std::to_string(element)); }
  void Add(bool element) { AddRaw(element ? "t" : "f"); }
  void Add(double element);
  void Add(Timestamp element);
  void AddNull() { AddRaw("NULL"); }
  template <typename T>
  void Add(const std::optional<T>& element) {
    if (element) {
      Add(*element);
    } else {
      AddNull();
    }
  }
  std::string Finish() const { return text_ + "}"; }

 private:
  void AddRaw(std::string_view raw);
  std::string text_ = "{";
  bool empty_ = true;
};

// A timestamptz column as text in the UTC session time zone.
Timestamp ToTimestamp(const pqxx::field& field);
std::optional<Timestamp> ToOptionalTimestamp(const pqxx::field& field);
std::optional<int> ToOptionalInt(const pqxx::field& field);
std::optional<std::string> ToOptionalString(const pqxx::field& field);

}  // namespace webhookd::pg
