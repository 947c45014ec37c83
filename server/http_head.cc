#include "server/http_head.h"

#include <boost/asio/error.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/http/error.hpp>
#include <iterator>
#include <string>
#include <string_view>

namespace webhookd {

namespace beast = boost::beast;
namespace http = beast::http;

int StatusForParseError(const beast::error_code& ec) {
  if (ec == http::error::header_limit || ec == http::error::buffer_overflow) return 431;
  if (ec == http::error::body_limit) return 413;
  if (ec == beast::error::timeout || ec == http::error::end_of_stream ||
      ec == boost::asio::error::eof || ec == boost::asio::error::operation_aborted ||
      ec == boost::asio::error::connection_reset || ec == boost::asio::error::broken_pipe ||
      ec == http::error::partial_message || ec == http::error::need_more) {
    return 0;
  }
  return 400;
}

int ReadHead(const http::request<http::string_body>& head, int max_fields, HttpRequest& out) {
  const auto fields = std::distance(head.begin(), head.end());
  if (fields > max_fields) return 431;
  out.method = std::string(head.method_string());
  const auto target = head.target();
  if (!ParseTarget(std::string_view(target.data(), target.size()), &out.path, &out.params)) {
    return 400;
  }
  const std::string_view sent(target.data(), target.size());
  const size_t q = sent.find('?');
  out.query = q == std::string_view::npos ? std::string() : std::string(sent.substr(q + 1));
  out.headers.clear();
  out.headers.reserve(static_cast<size_t>(fields));
  for (const auto& field : head) {
    out.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
  }
  return 0;
}

}  // namespace webhookd
