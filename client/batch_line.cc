#include "client/batch_line.h"

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "core/json_scan.h"
#include "core/validation.h"

namespace webhookd::client {
namespace {

// A string member; null counts as absent.
Result<std::optional<std::string>> StringMember(
    const std::map<std::string, std::string_view>& members, const std::string& name) {
  auto it = members.find(name);
  if (it == members.end() || it->second == "null") return std::nullopt;
  if (!it->second.starts_with('"'))
    return Fail(ErrorKind::kInvalid, "\"" + name + "\" must be a string");
  return DecodeJsonString(it->second);
}

// The top-level members, each as its exact bytes; a repeated key keeps its last value.
std::optional<std::map<std::string, std::string_view>> TopLevelMembers(std::string_view line) {
  auto scanned = ScanJsonObject(line, kMaxJsonDepth);
  if (!scanned) return std::nullopt;
  std::map<std::string, std::string_view> members;
  for (const JsonMember& m : *scanned) members[m.key] = m.raw;
  return members;
}

}  // namespace

Result<Event> ParseBatchLine(std::string_view line) {
  const auto members = TopLevelMembers(line);
  if (!members) return Fail(ErrorKind::kInvalid, "not a JSON object");
  for (const auto& [name, value] : *members) {
    if (name != "type" && name != "payload" && name != "tenant_id" && name != "destination_id" &&
        name != "idempotency_key" && name != "ordering_key" && name != "subjects")
      return Fail(ErrorKind::kInvalid, "unknown member \"" + name + "\"");
  }
  Event event;
  auto type = StringMember(*members, "type");
  if (!type) return Propagate(type);
  if (!*type) return Fail(ErrorKind::kInvalid, "\"type\" is required");
  event.type = **type;
  auto payload = members->find("payload");
  if (payload == members->end()) return Fail(ErrorKind::kInvalid, "\"payload\" is required");
  if (!payload->second.starts_with('{'))
    return Fail(ErrorKind::kInvalid, "\"payload\" must be a JSON object");
  // The raw bytes of the value, not a re-serialisation: the payload reaches the
  // receivers exactly as written in the file.
  event.payload = std::string(payload->second);
  for (auto [name, field] : {std::pair{"tenant_id", &event.tenant_id},
                             std::pair{"destination_id", &event.destination_id},
                             std::pair{"idempotency_key", &event.idempotency_key},
                             std::pair{"ordering_key", &event.ordering_key}}) {
    auto value = StringMember(*members, name);
    if (!value) return Propagate(value);
    *field = *value;
  }
  // Checked by the API, which answers a bad list with 422 naming "subjects".
  if (auto subjects = members->find("subjects"); subjects != members->end()) {
    const auto list = nlohmann::json::parse(subjects->second, nullptr, /*allow_exceptions=*/false);
    if (!list.is_null()) {
      if (!list.is_array())
        return Fail(ErrorKind::kInvalid, "\"subjects\" must be an array of strings");
      for (const auto& s : list) {
        if (!s.is_string())
          return Fail(ErrorKind::kInvalid, "\"subjects\" must be an array of strings");
        event.subjects.push_back(s.get<std::string>());
      }
    }
  }
  return event;
}

}  // namespace webhookd::client
