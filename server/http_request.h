#pragma once

#include <any>
#include <chrono>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace webhookd {

// One HTTP request as the listener parsed it: the head first (the body is read only once
// the request was admitted), then the body.
struct HttpRequest {
  std::string remote;                              // the client's address ("127.0.0.1", "::1")
  std::string method;                              // as sent: "GET", "TRACE", anything
  std::string path;                                // percent-decoded, without the query
  std::multimap<std::string, std::string> params;  // the query, decoded ('+' is a space)
  std::string query;  // the query as sent, without "?" (a signature may cover it)
  std::vector<std::pair<std::string, std::string>> headers;  // as sent, in order
  std::string body;
  bool has_body = false;  // a Content-Length above zero or a chunked body was announced
  // When its head was read (a long poll's wait counts from it).
  std::chrono::steady_clock::time_point arrived;
  // What admitting the request found out (the route, the key's scope), for handling it.
  std::any context;

  // The first value of a header (names compare case-insensitively), or "".
  std::string Header(std::string_view name) const;
  bool HasHeader(std::string_view name) const;
};

// Splits a request target ("/a%20b?x=1&y") into the decoded path and query parameters;
// false when it is not a path (origin form).
bool ParseTarget(std::string_view target, std::string* path,
                 std::multimap<std::string, std::string>* params);

}  // namespace webhookd
