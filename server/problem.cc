#include "server/problem.h"

#include <nlohmann/json.hpp>

namespace webhookd {
namespace {

std::string_view TitleFor(int status) {
  switch (status) {
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 409:
      return "Conflict";
    case 413:
      return "Content Too Large";
    case 415:
      return "Unsupported Media Type";
    case 422:
      return "Unprocessable Content";
    case 429:
      return "Too Many Requests";
    case 431:
      return "Request Header Fields Too Large";
    case 503:
      return "Service Unavailable";
    default:
      return status < 500 ? "Client Error" : "Internal Server Error";
  }
}

}  // namespace

int StatusFor(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kMalformed:
      return 400;
    case ErrorKind::kInvalid:
      return 422;
    case ErrorKind::kNotFound:
      return 404;
    case ErrorKind::kConflict:
      return 409;
    case ErrorKind::kTooLarge:
      return 413;
    case ErrorKind::kUnsupportedMediaType:
      return 415;
    case ErrorKind::kUnauthorized:
      return 401;
    case ErrorKind::kForbidden:
      return 403;
    case ErrorKind::kTooMany:
      return 429;
    case ErrorKind::kUnavailable:
    case ErrorKind::kStale:
      return 503;
    case ErrorKind::kInternal:
      return 500;
  }
  return 500;
}

Reply ProblemReply(const Error& error) {
  const int status = StatusFor(error.kind);
  // Internal details stay in the log, never in an answer.
  Reply reply = ProblemReply(status, status == 500 ? "an internal error occurred" : error.message);
  if (!error.fields.empty()) {
    auto body = nlohmann::json::parse(reply.body);
    auto& errors = body["errors"] = nlohmann::json::array();
    for (const auto& f : error.fields)
      errors.push_back({{"field", f.field}, {"message", f.message}});
    reply.body = body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }
  if (status == 503 || status == 429) reply.headers.emplace_back("Retry-After", "1");
  if (status == 401) reply.headers.emplace_back("WWW-Authenticate", "Bearer");
  return reply;
}

Reply ProblemReply(int status, std::string_view detail) {
  nlohmann::json body = {
      {"type", "about:blank"}, {"title", TitleFor(status)}, {"status", status}, {"detail", detail}};
  return Reply{status,
               body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
               "application/problem+json",
               {}};
}

}  // namespace webhookd
