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
  kTooMany,               // the caller has as many of these under way as it may (429)
  kUnavailable,           // the database or another dependency is down (503)
  // The event catalog changed between a check and the write that relied on it; the
  // caller checks again (503 if it ever reaches HTTP).
  kStale,
  kInternal,  // a bug (500)
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

// The error of a failed result, as the failure of a Result of another type:
//   if (!id) return Propagate(id);
template <typename T>
std::unexpected<Error> Propagate(const Result<T>& failed) {
  return std::unexpected<Error>(failed.error());
}

}  // namespace webhookd

// Propagation in the manner of abseil's RETURN_IF_ERROR / ASSIGN_OR_RETURN, for functions
// that return a Result.
//
//   WEBHOOKD_RETURN_IF_ERROR(CheckUrl(url));              // any Result<T>
//   WEBHOOKD_ASSIGN_OR_RETURN(auto body, ParseJson(raw));  // body is the value, moved out
//
// The expression is evaluated once; on failure its Error is returned unchanged.
#define WEBHOOKD_RETURN_IF_ERROR(...)                                                 \
  do {                                                                                \
    if (auto webhookd_result_ = (__VA_ARGS__); !webhookd_result_) {                   \
      return std::unexpected<::webhookd::Error>(std::move(webhookd_result_).error()); \
    }                                                                                 \
  } while (false)

#define WEBHOOKD_ASSIGN_OR_RETURN(lhs, ...)                                                 \
  WEBHOOKD_ASSIGN_OR_RETURN_IMPL_(WEBHOOKD_RESULT_CONCAT_(webhookd_result_, __LINE__), lhs, \
                                  __VA_ARGS__)

#define WEBHOOKD_RESULT_CONCAT_INNER_(a, b) a##b
#define WEBHOOKD_RESULT_CONCAT_(a, b) WEBHOOKD_RESULT_CONCAT_INNER_(a, b)
#define WEBHOOKD_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, ...)                         \
  auto tmp = (__VA_ARGS__);                                                    \
  if (!tmp) return std::unexpected<::webhookd::Error>(std::move(tmp).error()); \
  lhs = std::move(tmp).value()
