#pragma once

#include <httplib.h>

namespace webhookd::testing {

// Appends one request and its answer to <test log dir>/exchanges/<pid>.jsonl, one JSON
// line each ({"method","path","query","status","content_type","body","headers"}), so
// scripts/test can hold every answer the e2e suite saw against docs/openapi.json.
void RecordExchange(const httplib::Request& req, const httplib::Response& res);

// Makes `client` record every exchange it makes.
void RecordExchanges(httplib::Client& client);

}  // namespace webhookd::testing
