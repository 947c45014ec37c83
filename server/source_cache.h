#pragma once

// The inbound sources as ingest verifies against them: every live source with its
// secrets, read at once and kept with the generation it was read at. A request is
// verified against this copy without a database statement, so a flood of forged
// requests costs the database nothing; the copy is checked against the sources'
// generation at most once a second, and the store refuses an event verified against a
// generation that is no longer current (kStale), so a change made through another
// process is never missed for what is accepted.

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>

#include "base/result.h"
#include "core/source.h"
#include "store/source_store.h"

namespace webhookd {

class SourceCache {
 public:
  struct Snapshot {
    int64_t generation = 0;
    std::unordered_map<int64_t, Source> sources;
  };

  // Borrows `store`. `rate`: verified requests a second each source takes
  // (WEBHOOKD_SOURCE_RATE).
  SourceCache(SourceStore& store, int rate);

  // The sources now (null on the store's failure, with the error).
  Result<std::shared_ptr<const Snapshot>> Current();
  // The next Current() reads the sources again: they changed here, or the store found
  // the copy stale.
  void Invalidate();
  // 0 when source `id` may take one more verified request now; else the seconds to wait.
  int Take(int64_t id);

 private:
  SourceStore& store_;
  const double rate_;
  std::mutex mu_;  // guards the members below; held while the store is asked
  std::shared_ptr<const Snapshot> snapshot_;
  std::chrono::steady_clock::time_point checked_at_;
  struct Bucket {
    double tokens = 0;
    std::chrono::steady_clock::time_point at;
  };
  std::mutex rate_mu_;
  std::unordered_map<int64_t, Bucket> buckets_;  // guarded by rate_mu_
};

}  // namespace webhookd
