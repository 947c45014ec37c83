#include "server/api_request.h"

#include <charconv>

#include "base/strings.h"
#include "core/validation.h"

namespace webhookd::api {
namespace {

constexpr int kMaxLimit = 1000;
constexpr int kDefaultLimit = 50;

}  // namespace

Reply JsonReply(int status, const Json& body) {
  return Reply{status, Dump(body), "application/json", {}};
}

std::optional<std::string> QueryValue(const ApiRequest& req, const std::string& name) {
  auto it = req.query.find(name);
  if (it == req.query.end()) return std::nullopt;
  return it->second;
}

int ParseLimit(const ApiRequest& req, std::vector<FieldError>& errors, int absent) {
  auto limit = QueryValue(req, "limit");
  if (!limit) return absent;
  int value = 0;
  const auto [end, ec] = std::from_chars(limit->data(), limit->data() + limit->size(), value);
  if (ec != std::errc() || end != limit->data() + limit->size() || value < 1 || value > kMaxLimit) {
    errors.push_back({"limit", "must be an integer from 1 to 1000"});
    return absent;
  }
  return value;
}

Result<Page> ParsePage(const ApiRequest& req, std::string_view prefix) {
  Page page;
  std::vector<FieldError> errors;
  page.limit = ParseLimit(req, errors);
  if (auto cursor = QueryValue(req, "cursor"); cursor && !cursor->empty()) {
    page.before_id = ParseId(prefix, *cursor);
    if (!page.before_id) errors.push_back({"cursor", "is not a cursor from this list"});
  }
  if (!errors.empty()) return Invalid(std::move(errors));
  return page;
}

Result<AttemptPage> ParseAttemptPage(const ApiRequest& req) {
  AttemptPage page;
  std::vector<FieldError> errors;
  page.limit = ParseLimit(req, errors, kMaxLimit);
  if (auto cursor = QueryValue(req, "cursor"); cursor && !cursor->empty()) {
    const std::optional<int64_t> after = ParseBoundedInt(*cursor, 0, 1'000'000'000);
    if (after) {
      page.after = static_cast<int>(*after);
    } else {
      errors.push_back({"cursor", "is not a cursor from this list"});
    }
  }
  if (!errors.empty()) return Invalid(std::move(errors));
  return page;
}

Result<int64_t> PathId(const ApiRequest& req, std::string_view prefix, std::string_view what) {
  auto id = req.path_args.empty() ? std::nullopt : ParseId(prefix, req.path_args[0]);
  if (!id) return Fail(ErrorKind::kNotFound, "no " + std::string(what) + " with that id");
  return *id;
}

Result<std::optional<int64_t>> QueryId(const ApiRequest& req, const std::string& name,
                                       std::string_view prefix) {
  auto text = QueryValue(req, name);
  if (!text || text->empty()) return std::optional<int64_t>();
  auto id = ParseId(prefix, *text);
  if (!id) return Invalid({{name, "is not a valid id"}});
  return std::optional<int64_t>(*id);
}

Result<std::optional<std::string>> QueryTenant(const ApiRequest& req) {
  auto text = QueryValue(req, "tenant_id");
  if (!text || text->empty()) return std::optional<std::string>();
  if (!IsValidTenantId(*text)) return Invalid({{"tenant_id", kTenantIdRule}});
  return text;
}

Result<std::optional<Timestamp>> QueryTime(const ApiRequest& req, const std::string& name) {
  auto text = QueryValue(req, name);
  if (!text || text->empty()) return std::optional<Timestamp>();
  auto t = ParseRfc3339(*text);
  if (!t) return Invalid({{name, "must be an RFC 3339 time such as 2026-01-02T03:04:05Z"}});
  return std::optional<Timestamp>(*t);
}

}  // namespace webhookd::api
