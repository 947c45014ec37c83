#pragma once

#include <boost/beast/core/error.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>
#include <cstddef>

#include "server/http_request.h"

namespace webhookd {

// What the listener makes of a request's head, apart from its socket: one place for the
// rules, run by the listener on every request and by fuzz/fuzz_http_head.cc on arbitrary
// bytes.

// The answer to a head Beast's parser refused: 431 (header section over its limit), 413
// (a body announced or sent over the limit), 400 (not HTTP/1.1); 0 when the client went
// away or ran out of time (the connection is closed without an answer).
int StatusForParseError(const boost::beast::error_code& ec);

// Fills `out` (method, decoded path and query, headers) from a parsed head: 0, or the
// status to refuse it with (431 over `max_fields` fields, 400 a target that is not a path).
int ReadHead(const boost::beast::http::request<boost::beast::http::string_body>& head,
             int max_fields, HttpRequest& out);

}  // namespace webhookd
