#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <vector>

#include "base/clock.h"
#include "base/metrics.h"

namespace webhookd {

// The latest requests to the inbound sources' addresses, as this process answered them:
// what the console shows per source ("accepted", "duplicate", "unverified", …). Kept in
// memory, never in the database: an unverified request must cost the database nothing,
// and a flood of them only pushes older entries out. One ring for every source, so the
// memory is bounded whatever the number of sources.
class InboundRequestLog {
 public:
  struct Entry {
    int64_t source_id = 0;
    Timestamp at;
    Metrics::InboundOutcome outcome = Metrics::InboundOutcome::kAccepted;
    int status = 0;                   // the HTTP status answered
    std::optional<int64_t> event_id;  // accepted or duplicate: the event
  };

  explicit InboundRequestLog(size_t capacity = 10000) : capacity_(capacity) {}
  InboundRequestLog(const InboundRequestLog&) = delete;
  InboundRequestLog& operator=(const InboundRequestLog&) = delete;

  void Record(const Entry& entry);
  // The latest `limit` entries of one source, newest first.
  std::vector<Entry> Latest(int64_t source_id, size_t limit) const;

 private:
  const size_t capacity_;
  mutable std::mutex mu_;
  std::vector<Entry> ring_;  // guarded by mu_; oldest at next_ once full
  size_t next_ = 0;          // guarded by mu_
};

}  // namespace webhookd
