// The bytes any client can send to the API port, through what the listener does with a
// request before anything else: Beast's parser with webhookd's limits (64 KiB of header
// section, WEBHOOKD_MAX_PAYLOAD_BYTES' default of body), then ReadHead (at most 100
// fields, the target decoded into a path and query). Invariants: a refusal is one of the
// statuses the contract names (400, 413, 431) or a silent close; a head that passes has a
// path that starts with '/'; no body beyond the limit is ever held.
#include <boost/asio/buffer.hpp>
#include <boost/beast/http.hpp>
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz/fuzz_check.h"
#include "server/http_head.h"

namespace {

constexpr size_t kHeaderLimit = 64 * 1024;
constexpr size_t kBodyLimit = 262144;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace http = boost::beast::http;
  http::request_parser<http::string_body> parser;
  parser.header_limit(static_cast<std::uint32_t>(kHeaderLimit));
  parser.body_limit(kBodyLimit);
  boost::beast::error_code ec;
  size_t used = 0;
  // As from a socket: whatever is there is offered; the parser takes what it can.
  while (used < size && !parser.is_done()) {
    const size_t n = parser.put(boost::asio::buffer(data + used, size - used), ec);
    used += n;
    if (ec || n == 0) break;
  }
  if (ec && ec != http::error::need_more) {
    const int status = webhookd::StatusForParseError(ec);
    FUZZ_CHECK(status == 0 || status == 400 || status == 413 || status == 431);
    return 0;
  }
  if (!parser.is_header_done()) return 0;  // the client still owes its head
  webhookd::HttpRequest request;
  const int status = webhookd::ReadHead(parser.get(), 100, request);
  FUZZ_CHECK(status == 0 || status == 400 || status == 431);
  if (status == 0) {
    FUZZ_CHECK(!request.path.empty() && request.path.front() == '/');
    FUZZ_CHECK(request.headers.size() <= 100);
    (void)request.Header("Authorization");
    (void)request.HasHeader("Content-Type");
  }
  FUZZ_CHECK(parser.get().body().size() <= kBodyLimit);
  return 0;
}
