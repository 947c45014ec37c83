#pragma once

#include <expected>
#include <string>
#include <utility>
#include <vector>

namespace webhookd {

// What went wrong, coarse enough for the HTTP layer to map once to a status code.
enum class ErrorKind {
  kMalformed,             // the input could not be parsed at all (400)
  kInvalid,               // well-formed but breaks a rule (422)
  kNotFound,              // 404
  kConflict,              // 409
  kTooLarge,              // 413
  kUnsupportedMediaType,  // 415: the body is not sent as JSON
  kUnauthorized,          // 401
  kForbidden,             // 403
  kUnavailable,           // the database or another dependency is down (503)
  kInternal,              // a bug (500)
};

struct FieldError {
  std::string field;
  std::string message;
  bool operator==(const FieldError&) const = default;
};

struct Error {
  ErrorKind kind = ErrorKind::kInternal;
  std::string message;
  std::vector<FieldError> fields;  // one entry per bad field of a kInvalid input
};

template <typename T>
using Result = std::expected<T, Error>;

inline std::unexpected<Error> Fail(ErrorKind kind, std::string message) {
  return std::unexpected<Error>(Error{kind, std::move(message), {}});
}

inline std::unexpected<Error> Invalid(std::vector<FieldError> fields) {
  std::string message =
      fields.empty() ? "invalid input" : fields.front().field + ": " + fields.front().message;
  return std::unexpected<Error>(Error{ErrorKind::kInvalid, std::move(message), std::move(fields)});
}

}  // namespace webhookd
