#include "client/http_transport.h"

#include <httplib.h>

#include "net/url.h"

namespace webhookd::client {
namespace {

std::pair<time_t, time_t> SecUsec(Duration d) {
  const auto us = std::max<int64_t>(1, d.count());
  return {static_cast<time_t>(us / 1'000'000), static_cast<time_t>(us % 1'000'000)};
}

}  // namespace

HttpTransport::HttpTransport(const std::string& origin, Options options)
    : origin_(origin), options_(options), client_(std::make_unique<httplib::Client>(origin)) {
  const auto [cs, cu] = SecUsec(options_.connect_timeout);
  client_->set_connection_timeout(cs, cu);
  const auto [is, iu] = SecUsec(options_.io_timeout);
  client_->set_read_timeout(is, iu);
  client_->set_write_timeout(is, iu);
  client_->set_keep_alive(true);
  client_->set_tcp_nodelay(true);
  client_->set_follow_location(false);
  client_->enable_server_certificate_verification(true);
}

HttpTransport::~HttpTransport() = default;

TransportResult HttpTransport::Send(const HttpRequest& request) {
  httplib::Request req;
  req.method = "POST";
  req.path = request.path;
  for (const auto& [name, value] : request.headers) req.headers.emplace(name, value);
  req.body = request.body;

  httplib::Response res;
  httplib::Error error = httplib::Error::Success;
  const auto started = std::chrono::steady_clock::now();
  if (!client_->send(req, res, error)) {
    const std::string what = origin_ + " (" + httplib::to_string(error) + ")";
    switch (error) {
      case httplib::Error::Connection:
      case httplib::Error::ConnectionTimeout:
      case httplib::Error::BindIPAddress:
      case httplib::Error::SSLConnection:
      case httplib::Error::SSLLoadingCerts:
      case httplib::Error::SSLServerVerification:
        return std::unexpected(TransportError{TransportError::Kind::kConnect, what});
      default:
        break;
    }
    // httplib reports a socket timeout as a plain read or write error; the clock tells.
    if (std::chrono::steady_clock::now() - started >= options_.io_timeout) {
      return std::unexpected(TransportError{TransportError::Kind::kTimeout, what});
    }
    return std::unexpected(TransportError{TransportError::Kind::kIo, what});
  }
  HttpResponse response;
  response.status = res.status;
  response.body = std::move(res.body);
  if (res.has_header("Retry-After")) response.retry_after = res.get_header_value("Retry-After");
  return response;
}

Result<ApiUrl> ParseApiUrl(std::string_view text) {
  auto url = ParseUrl(text);
  if (!url) return Propagate(url);
  if (url->target.find_first_of("?#") != std::string::npos) {
    return Fail(ErrorKind::kInvalid, "a query has no place in the API's URL");
  }
  const bool v6 = url->host.find(':') != std::string::npos;
  ApiUrl api;
  api.origin = url->scheme + "://" + (v6 ? "[" + url->host + "]" : url->host) + ":" +
               std::to_string(url->port);
  api.prefix = url->target;
  while (!api.prefix.empty() && api.prefix.back() == '/') api.prefix.pop_back();
  return api;
}

}  // namespace webhookd::client
