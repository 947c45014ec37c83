#pragma once

#include <atomic>
#include <mutex>

#include "base/clock.h"
#include "trace/otlp_transport.h"

namespace webhookd::trace {

// OtlpTransport over libcurl. One easy handle in a multi handle of its own, both reused
// so the connection to the collector is kept alive between exports; the exporter's one
// thread is its only user (a mutex makes a second caller wait rather than share it). The
// multi handle is what lets Cancel, from another thread, end a Post at once. libcurl's defaults
// stand (a proxy from http_proxy/https_proxy, the system's CA certificates) except that redirects
// are never followed and no signal is used for timeouts.
class CurlTransport final : public OtlpTransport {
 public:
  // `clock` reads a Retry-After given as an HTTP date.
  explicit CurlTransport(Clock& clock);
  ~CurlTransport() override;
  CurlTransport(const CurlTransport&) = delete;
  CurlTransport& operator=(const CurlTransport&) = delete;

  Result<TransportAnswer> Post(const std::string& url,
                               const std::vector<std::pair<std::string, std::string>>& headers,
                               std::string_view content_type, const std::string& body,
                               std::chrono::milliseconds timeout) override;
  void Cancel() override;

 private:
  Clock& clock_;
  std::mutex mu_;  // one Post at a time
  std::atomic<bool> cancelled_{false};
  void* multi_;  // CURLM*, kept out of this header
  void* easy_;   // CURL*
};

}  // namespace webhookd::trace
