#pragma once

#include <expected>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace webhookd::client {

// One POST to the API. The transport adds nothing but what HTTP itself needs.
struct HttpRequest {
  std::string path;  // "/v1/events"
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
};

struct HttpResponse {
  int status = 0;
  std::string body;
  std::optional<std::string> retry_after;  // the Retry-After header, verbatim
};

// A request that got no HTTP answer. Each kind is worth retrying: with an
// Idempotency-Key a repeat cannot publish twice, even if the first one did arrive.
struct TransportError {
  enum class Kind {
    kConnect,  // no connection (refused, unreachable, TLS handshake)
    kTimeout,  // connected, but no answer in time
    kIo,       // the connection broke while sending or reading
  };
  Kind kind = Kind::kConnect;
  std::string message;
};

using TransportResult = std::expected<HttpResponse, TransportError>;

// Sends requests to one API. An implementation need not be thread-safe: a publisher
// thread owns its transport.
class Transport {
 public:
  virtual ~Transport() = default;
  virtual TransportResult Send(const HttpRequest& request) = 0;
};

}  // namespace webhookd::client
