#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace webhookd::client {

// The top-level members of a JSON object, each value as the exact bytes it has in
// `text` (a view into it). nullopt unless `text` is one well-formed JSON object; a
// duplicated key keeps its last value, as JSON parsers commonly do.
//
// TODO: switch to core/json_scan.h once it lands; it does the same for the server.
std::optional<std::map<std::string, std::string_view>> TopLevelMembers(std::string_view text);

}  // namespace webhookd::client
