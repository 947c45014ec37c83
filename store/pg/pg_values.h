#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <pqxx/pqxx>
#include <string>
#include <string_view>
#include <vector>

#include "base/clock.h"
#include "store/pg/query.h"

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

// The parameters of a statement whose file names each one, on a line of its own:
// `-- @param $<n> <name>`, from $1 up. Each is bound by that name, so a parameter added
// to a statement is one @param line and one Set, never a renumbering of the others.
// Binding a name the statement does not declare, binding one twice, or leaving one
// unbound makes Positional() throw std::logic_error (an internal error to the caller, as
// Exec runs inside RunOn), and so does a statement whose @param lines are not exactly the
// parameters its text uses; nothing throws earlier, where no RunOn would catch it.
class NamedParams {
 public:
  explicit NamedParams(const Query& query);

  NamedParams& Set(std::string_view name, std::string value);
  NamedParams& Set(std::string_view name, std::string_view value) {
    return Set(name, std::string(value));
  }
  NamedParams& Set(std::string_view name, const char* value) {
    return Set(name, std::string(value));
  }
  NamedParams& Set(std::string_view name, int64_t value) {
    return Set(name, std::to_string(value));
  }
  NamedParams& Set(std::string_view name, int value) { return Set(name, std::to_string(value)); }
  NamedParams& Set(std::string_view name, bool value) {
    return Set(name, std::string(value ? "true" : "false"));
  }
  NamedParams& Set(std::string_view name, Timestamp value);
  NamedParams& SetNull(std::string_view name);
  template <typename T>
  NamedParams& Set(std::string_view name, const std::optional<T>& value) {
    return value ? Set(name, *value) : SetNull(name);
  }

  const Query& query() const { return query_; }
  // The values in the statement's order, once every name is bound.
  Params Positional() const;

 private:
  // The index of `name`, marked bound; nullopt (and error_ set) when it cannot be bound.
  std::optional<size_t> Slot(std::string_view name);

  Query query_;
  std::string error_;                      // the first mistake, thrown by Positional()
  const std::vector<std::string>* names_;  // (*names_)[i] is $(i + 1); read once per statement
  std::vector<std::optional<std::string>> values_;
  std::vector<bool> bound_;
};

// The @param names of `query`, $1's first; empty when it declares none. Throws
// std::logic_error unless they are numbered $1 to $n in order, with distinct names, and
// the statement's text (outside comments) uses each of $1 to $n and nothing above $n.
std::vector<std::string> ParamNames(const Query& query);

// The highest $n in `sql` outside its comments: how many parameters it takes.
int HighestParam(std::string_view sql);

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
