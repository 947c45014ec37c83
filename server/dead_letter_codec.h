#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "base/result.h"
#include "core/dead_letter.h"
#include "server/json_codec.h"

namespace webhookd {

// The JSON of dead letters and their replays (dead_letters_api).

// The body of POST /v1/admin/dead-letters/replay: its filter, with the names and the text
// of the list's query parameters (destination_id, since, until, reason, tenant_id), each a
// string or null. A body with none of them must say "all": true.
Result<std::multimap<std::string, std::string>> ParseReplayFilterBody(std::string_view body);

Json DeadLetterJson(const DeadLetter& d);
Json ReplayedJson(int64_t delivery_id);
// The answer to a bulk replay: how many were replayed, and whether more may be left.
Json BulkReplayedJson(int64_t count, bool more);

}  // namespace webhookd
