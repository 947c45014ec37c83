#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/result.h"
#include "core/destination.h"
#include "core/destination_stats.h"
#include "core/page.h"
#include "core/scope.h"

namespace webhookd {

// Destinations; deleted ones are kNotFound everywhere, and so is every destination outside
// the call's Scope. Thread-safe; nothing here throws.
class DestinationStore {
 public:
  virtual ~DestinationStore() = default;
  // kConflict, creating nothing, when its tenant (or the no-tenant space) already has
  // `max_per_tenant` live destinations.
  virtual Result<Destination> CreateDestination(const Destination& d, int max_per_tenant) = 0;
  virtual Result<Destination> GetDestination(int64_t id, const Scope& scope) = 0;
  virtual Result<Listing<Destination>> ListDestinations(const DestinationFilter& filter,
                                                        const Page& page, const Scope& scope) = 0;
  // What must hold of the stored destination (credentials opened) for a patch to apply;
  // an error refuses the patch as it is.
  using UpdateCheck = std::function<Result<void>(const Destination& stored)>;
  // Applies the given fields; the caller has validated them. kInvalid (field tenant_id)
  // when `fields` names a tenant_id other than the destination's. `check`, when given,
  // sees the stored row locked in the same transaction, so no other patch lands between
  // the check and the write.
  virtual Result<Destination> UpdateDestination(int64_t id, const DestinationFields& fields,
                                                const Scope& scope,
                                                const UpdateCheck& check = nullptr) = 0;
  // Makes `secret` the destination's signing secret. The one it replaces keeps signing
  // for `grace` (zero: every earlier secret ends now); earlier secrets past their grace
  // are erased. kConflict when more than kMaxValidSecrets would sign at once. Returns
  // when the replaced secret stops signing.
  virtual Result<Timestamp> RotateSecret(int64_t id, const std::string& secret, Duration grace,
                                         const Scope& scope) = 0;
  static constexpr int kMaxValidSecrets = 5;
  // Soft-deletes and cancels its unfinished deliveries, in one transaction.
  virtual Result<void> DeleteDestination(int64_t id, const Scope& scope) = 0;
  // Its outcomes over `window` from its rollups: every bucket of the window in time
  // order, zeros where nothing happened. The caller has checked the window's size.
  virtual Result<std::vector<DestinationStatsBucket>> GetDestinationStats(
      int64_t id, const DestinationStatsWindow& window, const Scope& scope) = 0;
};
}  // namespace webhookd
