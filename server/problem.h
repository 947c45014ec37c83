#pragma once

#include <string>
#include <string_view>

#include "base/result.h"

namespace webhookd {

// An HTTP answer before it is written: status, body and the headers webhookd adds.
struct Reply {
  int status = 200;
  std::string body;  // JSON, or empty for 204
  std::string content_type = "application/json";
  std::vector<std::pair<std::string, std::string>> headers;
};

int StatusFor(ErrorKind kind);

// An RFC 9457 problem: {"type","title","status","detail"} plus "errors" for field errors.
Reply ProblemReply(const Error& error);
Reply ProblemReply(int status, std::string_view detail);

}  // namespace webhookd
