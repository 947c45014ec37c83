#pragma once

#include <memory>
#include <string>

#include "base/clock.h"
#include "base/result.h"
#include "client/transport.h"

namespace httplib {
class Client;
}

namespace webhookd::client {

// A Transport over cpp-httplib to one origin (http or https). It keeps its connection
// alive between requests and sets TCP_NODELAY, as a request is one small write that
// should not wait for an ACK. Not thread-safe: one per thread.
class HttpTransport final : public Transport {
 public:
  struct Options {
    Duration connect_timeout = std::chrono::seconds(5);
    // Longest wait for the request to be written, and for each read of the response.
    Duration io_timeout = std::chrono::seconds(30);
  };

  // `origin` is "http://127.0.0.1:8080" (scheme, host, port; no path).
  HttpTransport(const std::string& origin, Options options);
  ~HttpTransport() override;

  // Transport:
  TransportResult Send(const HttpRequest& request) override;

 private:
  std::string origin_;
  Options options_;
  std::unique_ptr<httplib::Client> client_;
};

// Splits an API URL ("https://api.example.com:8443/webhookd") into the origin the
// transport connects to and the path prefix routes go under ("" or "/webhookd").
// kInvalid unless it is an absolute http(s) URL without query or fragment.
struct ApiUrl {
  std::string origin;
  std::string prefix;
};
Result<ApiUrl> ParseApiUrl(std::string_view url);

}  // namespace webhookd::client
