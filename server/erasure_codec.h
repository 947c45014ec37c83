#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "base/result.h"
#include "core/erasure.h"
#include "server/json_codec.h"

namespace webhookd {

// The JSON of subjects' erasures (erasures_api).

struct ErasureRequest {
  std::string subject;
  std::optional<std::string> tenant_id;  // an operator's key may erase within one tenant
};

// A POST /v1/subjects/erase body {"subject", "tenant_id"?}: kMalformed when it is not JSON,
// kInvalid when it breaks a rule.
Result<ErasureRequest> ParseErasureRequest(std::string_view body);

// {"id", "status", "events", "cancelled_deliveries", "created_at", "finished_at",
// "tenant_id"}: never the subject.
Json ErasureJson(const Erasure& e);

}  // namespace webhookd
