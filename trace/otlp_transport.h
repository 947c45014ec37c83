#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/result.h"

namespace webhookd::trace {

// A collector's answer to one export.
struct TransportAnswer {
  int status = 0;
  std::optional<std::chrono::milliseconds> retry_after;  // the Retry-After header's wait
};

// How an export reaches the collector: one HTTP POST. An Error is a request that got no
// answer (no connection, a timeout); every HTTP status is an answer.
class OtlpTransport {
 public:
  virtual ~OtlpTransport() = default;
  virtual Result<TransportAnswer> Post(
      const std::string& url, const std::vector<std::pair<std::string, std::string>>& headers,
      std::string_view content_type, const std::string& body,
      std::chrono::milliseconds timeout) = 0;

  // Ends a Post in progress, and fails every later one, at once; any thread may call it.
  // Shutdown's deadline does not wait for a collector that does not answer.
  virtual void Cancel() {}
};

}  // namespace webhookd::trace
