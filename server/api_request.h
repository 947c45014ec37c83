#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/ids.h"
#include "server/api.h"
#include "server/json_codec.h"

// What every handler file of the Api shares: reading a request's path and query, and
// writing a JSON reply.
namespace webhookd::api {

Reply JsonReply(int status, const Json& body);

std::optional<std::string> QueryValue(const ApiRequest& req, const std::string& name);

// ?limit=, 1 to 1000; `absent` (50) when absent. A bad value adds its error to `errors`.
int ParseLimit(const ApiRequest& req, std::vector<FieldError>& errors, int absent = 50);

// ?limit= and ?cursor=; the cursor is the id of the last item of the previous page.
Result<Page> ParsePage(const ApiRequest& req, std::string_view prefix);

// ?limit= (default 1000) and ?cursor= of a delivery's attempts, oldest first; the cursor
// is the last attempt number of the previous page.
Result<AttemptPage> ParseAttemptPage(const ApiRequest& req);

// The {} of the route as an id of `prefix`'s kind: kNotFound, saying "no <what> with that
// id", when it is not one (an id of another kind names nothing here).
Result<int64_t> PathId(const ApiRequest& req, std::string_view prefix, std::string_view what);

// A filter id in the query string: absent, or well-formed.
Result<std::optional<int64_t>> QueryId(const ApiRequest& req, const std::string& name,
                                       std::string_view prefix);

// ?tenant_id=: absent, or a valid tenant id.
Result<std::optional<std::string>> QueryTenant(const ApiRequest& req);

// An RFC 3339 time in the query string: absent, or valid.
Result<std::optional<Timestamp>> QueryTime(const ApiRequest& req, const std::string& name);

// {"data": [...], "next_cursor": ...} of a page of `listing`.
template <typename T, typename F>
Reply ListReply(const Listing<T>& listing, std::string_view prefix, F&& to_json) {
  Json data = Json::array();
  for (const T& item : listing.items) data.push_back(to_json(item));
  Json body = {{"data", std::move(data)}, {"next_cursor", nullptr}};
  if (listing.next_before_id) body["next_cursor"] = FormatId(prefix, *listing.next_before_id);
  return JsonReply(200, body);
}

}  // namespace webhookd::api
