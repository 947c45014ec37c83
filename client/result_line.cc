#include "client/result_line.h"

#include <nlohmann/json.hpp>

#include "base/strings.h"

namespace webhookd::client {
namespace {

using Json = nlohmann::ordered_json;

// Never throws: bytes that are not UTF-8 in a body are replaced.
std::string Dump(const Json& json) {
  return json.dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace

std::string ResultLine(const PublishResult& result, std::optional<int> line) {
  if (result.outcome == PublishResult::Outcome::kAccepted) {
    const std::string_view body = Trim(result.body, " \t\r\n");
    if (Json::accept(body)) {
      if (body.find('\n') == std::string_view::npos) return std::string(body);
      return Dump(Json::parse(body));
    }
    return Dump(Json{{"status", result.status}, {"body", result.body}});
  }
  Json json;
  // A refusal's body is the API's problem details: shown as they are, field errors and all.
  if (result.outcome == PublishResult::Outcome::kRefused && Json::accept(result.body)) {
    json["error"] = Json::parse(result.body);
  } else {
    json["error"] = result.error;
  }
  json["status"] = result.status == 0 ? Json(nullptr) : Json(result.status);
  json["attempts"] = result.attempts;
  json["idempotency_key"] = result.idempotency_key;
  if (line) json["line"] = *line;
  return Dump(json);
}

std::string BadLineResultLine(const std::string& why, int line) {
  Json json;
  json["error"] = "line " + std::to_string(line) + ": " + why;
  json["status"] = nullptr;
  json["attempts"] = 0;
  json["line"] = line;
  return Dump(json);
}

}  // namespace webhookd::client
