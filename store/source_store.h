#pragma once

#include <cstdint>
#include <functional>

#include "base/result.h"
#include "core/page.h"
#include "core/scope.h"
#include "core/source.h"

namespace webhookd {

// Inbound sources and the events their requests make (docs/inbound.md). Deleted sources
// are kNotFound everywhere, and so is every source outside the call's Scope. Thread-safe;
// nothing here throws.
class SourceStore {
 public:
  virtual ~SourceStore() = default;
  virtual Result<Source> CreateSource(const Source& source) = 0;
  virtual Result<Source> GetSource(int64_t id, const Scope& scope) = 0;
  virtual Result<Listing<Source>> ListSources(const SourceFilter& filter, const Page& page,
                                              const Scope& scope) = 0;
  // Changes the stored source (its row locked) by `apply`, which may refuse; the change
  // is written only if it returns success. The secrets are not given to `apply`.
  using SourcePatch = std::function<Result<void>(Source& source)>;
  virtual Result<Source> UpdateSource(int64_t id, const SourcePatch& apply, const Scope& scope) = 0;
  // Makes `secret` the source's secret; the one it replaces verifies for `grace` more
  // (zero: not at all). Returns when it stops.
  virtual Result<Timestamp> RotateSourceSecret(int64_t id, const std::string& secret,
                                               Duration grace, const Scope& scope) = 0;
  virtual Result<void> DeleteSource(int64_t id, const Scope& scope) = 0;

  // Every live source with its secrets opened, and the generation read.
  virtual Result<SourceSnapshot> LoadSources() = 0;
  // The sources' generation now: one small statement.
  virtual Result<int64_t> SourceGeneration() = 0;
  // Writes the event, its fan-out and its duplicate key in one transaction, or, when the
  // key names an event already, nothing (that event's id, `duplicate`). kStale when the
  // sources changed since `event.generation`.
  virtual Result<InboundReceipt> InsertInboundEvent(const InboundEvent& event) = 0;
};

}  // namespace webhookd
