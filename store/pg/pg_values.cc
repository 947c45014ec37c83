#include "store/pg/pg_values.h"

#include <cctype>
#include <cstdio>
#include <map>
#include <mutex>
#include <set>
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

namespace {

// `sql` without its -- comments, and the @param lines of those comments.
void SplitComments(std::string_view sql, std::string* code, std::vector<std::string_view>* params) {
  constexpr std::string_view kParam = "@param ";
  while (!sql.empty()) {
    const size_t eol = std::min(sql.find('\n'), sql.size());
    std::string_view line = sql.substr(0, eol);
    sql.remove_prefix(std::min(eol + 1, sql.size()));
    const size_t dashes = line.find("--");
    if (dashes != std::string_view::npos) {
      std::string_view comment = line.substr(dashes + 2);
      line = line.substr(0, dashes);
      while (comment.starts_with(' ')) comment.remove_prefix(1);
      if (comment.starts_with(kParam)) params->push_back(comment.substr(kParam.size()));
    }
    code->append(line);
    code->push_back('\n');
  }
}

// Each $n of `code`, in order of appearance.
std::vector<int> Placeholders(std::string_view code) {
  std::vector<int> found;
  for (size_t i = 0; i < code.size(); ++i) {
    if (code[i] != '$' || i + 1 == code.size() ||
        std::isdigit(static_cast<unsigned char>(code[i + 1])) == 0) {
      continue;
    }
    int n = 0;
    while (i + 1 < code.size() && std::isdigit(static_cast<unsigned char>(code[i + 1])) != 0) {
      n = n * 10 + (code[++i] - '0');
    }
    found.push_back(n);
  }
  return found;
}

[[noreturn]] void Refuse(std::string_view statement, const std::string& why) {
  throw std::logic_error("statement " + std::string(statement) + ": " + why);
}

}  // namespace

int HighestParam(std::string_view sql) {
  std::string code;
  std::vector<std::string_view> params;
  SplitComments(sql, &code, &params);
  int highest = 0;
  for (int n : Placeholders(code)) highest = std::max(highest, n);
  return highest;
}

std::vector<std::string> ParamNames(const Query& query) {
  std::string code;
  std::vector<std::string_view> params;
  SplitComments(query.sql, &code, &params);
  std::vector<std::string> names;
  if (params.empty()) return names;
  std::set<std::string, std::less<>> seen;
  for (std::string_view param : params) {
    const std::string expected = "$" + std::to_string(names.size() + 1) + " ";
    if (!param.starts_with(expected)) {
      Refuse(query.name, "@param lines must go from $1 up, one each; expected " + expected +
                             "at \"" + std::string(param) + "\"");
    }
    param.remove_prefix(expected.size());
    size_t end = 0;
    while (end < param.size() &&
           (std::isalnum(static_cast<unsigned char>(param[end])) != 0 || param[end] == '_')) {
      ++end;
    }
    std::string name(param.substr(0, end));
    // A name ends at a space: "enabled:" would bind under a name no caller spells.
    if (name.empty() || (end < param.size() && param[end] != ' ') || !seen.insert(name).second) {
      Refuse(query.name,
             "@param names must be identifiers, distinct, each followed by a space "
             "or the end of its line: \"" +
                 std::string(param) + "\"");
    }
    names.push_back(std::move(name));
  }
  std::vector<bool> used(names.size() + 1, false);
  for (int n : Placeholders(code)) {
    if (n < 1 || n > std::ssize(names)) {
      Refuse(query.name, "uses $" + std::to_string(n) + " but names " +
                             std::to_string(names.size()) + " parameters");
    }
    used[n] = true;
  }
  for (size_t n = 1; n <= names.size(); ++n) {
    if (!used[n]) Refuse(query.name, "names $" + std::to_string(n) + " but never uses it");
  }
  return names;
}

namespace {

// What ParamNames found in a statement: its names, or why it cannot be bound by name.
struct ParsedParams {
  std::vector<std::string> names;
  std::string error;
};

// Each statement's text is read once per process, not on every call: the statements
// bound by name include the ingest group and the outcome batch. Keyed by the text, so a
// statement made up by a test is read for what it says.
const ParsedParams& ParsedParamsOf(const Query& query) {
  static std::mutex mu;
  static std::map<std::string, ParsedParams, std::less<>> parsed;
  std::lock_guard lock(mu);
  if (auto it = parsed.find(query.sql); it != parsed.end()) return it->second;
  ParsedParams p;
  try {
    p.names = ParamNames(query);
    if (p.names.empty()) Refuse(query.name, "has no @param lines to bind by name");
  } catch (const std::logic_error& e) {
    p.error = e.what();
  }
  return parsed.emplace(std::string(query.sql), std::move(p)).first->second;
}

}  // namespace

NamedParams::NamedParams(const Query& query) : query_(query) {
  const ParsedParams& parsed = ParsedParamsOf(query);
  names_ = &parsed.names;
  error_ = parsed.error;
  values_.resize(names_->size());
  bound_.resize(names_->size(), false);
}

std::optional<size_t> NamedParams::Slot(std::string_view name) {
  if (!error_.empty()) return std::nullopt;
  const std::vector<std::string>& names = *names_;
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] != name) continue;
    if (bound_[i]) {
      error_ = "statement " + std::string(query_.name) + ": $" + std::to_string(i + 1) + " " +
               names[i] + " is bound twice";
      return std::nullopt;
    }
    bound_[i] = true;
    return i;
  }
  error_ =
      "statement " + std::string(query_.name) + ": has no parameter named " + std::string(name);
  return std::nullopt;
}

NamedParams& NamedParams::Set(std::string_view name, std::string value) {
  if (auto slot = Slot(name)) values_[*slot] = std::move(value);
  return *this;
}

NamedParams& NamedParams::Set(std::string_view name, Timestamp value) {
  return Set(name, FormatRfc3339(value));
}

NamedParams& NamedParams::SetNull(std::string_view name) {
  if (auto slot = Slot(name)) values_[*slot] = std::nullopt;
  return *this;
}

Params NamedParams::Positional() const {
  if (!error_.empty()) throw std::logic_error(error_);
  Params params;
  const std::vector<std::string>& names = *names_;
  for (size_t i = 0; i < names.size(); ++i) {
    if (!bound_[i])
      Refuse(query_.name, "$" + std::to_string(i + 1) + " " + names[i] + " is not bound");
    params.Add(values_[i]);
  }
  return params;
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
