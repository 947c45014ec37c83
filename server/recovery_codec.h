#pragma once

#include <optional>
#include <string_view>

#include "base/clock.h"
#include "base/result.h"
#include "core/recovery.h"
#include "server/json_codec.h"

namespace webhookd {

// The JSON of destinations' recoveries (recoveries_api).

struct RecoveryRequest {
  Timestamp since;
  std::optional<Timestamp> until;
};

// A POST /v1/destinations/{id}/recover body {"since", "until"?}: kMalformed when it is not
// JSON, kInvalid when it breaks a rule (since missing, a time not RFC 3339, since not
// before until, a member it does not know).
Result<RecoveryRequest> ParseRecoveryRequest(std::string_view body);

// {"id", "destination_id", "status", "replayed", "since", "until", "created_at",
// "finished_at"}.
Json RecoveryJson(const Recovery& r);

}  // namespace webhookd
