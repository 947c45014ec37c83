#include "client/batch_line.h"

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "client/json_members.h"

namespace webhookd::client {
namespace {

// A string member; null counts as absent.
Result<std::optional<std::string>> StringMember(
    const std::map<std::string, std::string_view>& members, const std::string& name) {
  auto it = members.find(name);
  if (it == members.end() || it->second == "null") return std::nullopt;
  if (!it->second.starts_with('"'))
    return Fail(ErrorKind::kInvalid, "\"" + name + "\" must be a string");
  return nlohmann::json::parse(it->second).get<std::string>();
}

}  // namespace

Result<Event> ParseBatchLine(std::string_view line) {
  const auto members = TopLevelMembers(line);
  if (!members) return Fail(ErrorKind::kInvalid, "not a JSON object");
  for (const auto& [name, value] : *members) {
    if (name != "type" && name != "payload" && name != "tenant_id" && name != "destination_id" &&
        name != "idempotency_key")
      return Fail(ErrorKind::kInvalid, "unknown member \"" + name + "\"");
  }
  Event event;
  auto type = StringMember(*members, "type");
  if (!type) return std::unexpected(type.error());
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
                             std::pair{"idempotency_key", &event.idempotency_key}}) {
    auto value = StringMember(*members, name);
    if (!value) return std::unexpected(value.error());
    *field = *value;
  }
  return event;
}

}  // namespace webhookd::client
