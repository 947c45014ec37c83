#include "server/inbound_request_log.h"

namespace webhookd {

void InboundRequestLog::Record(const Entry& entry) {
  if (capacity_ == 0) return;
  std::lock_guard lock(mu_);
  if (ring_.size() < capacity_) {
    ring_.push_back(entry);
    return;
  }
  ring_[next_] = entry;
  next_ = (next_ + 1) % capacity_;
}

std::vector<InboundRequestLog::Entry> InboundRequestLog::Latest(int64_t source_id,
                                                                size_t limit) const {
  std::vector<Entry> out;
  std::lock_guard lock(mu_);
  const size_t n = ring_.size();
  // Newest first: the slot before next_ once full, else the end of the vector.
  const size_t after_newest = n < capacity_ ? n : next_ + n;
  for (size_t i = 0; i < n && out.size() < limit; ++i) {
    const Entry& e = ring_[(after_newest - 1 - i) % n];
    if (e.source_id == source_id) out.push_back(e);
  }
  return out;
}

}  // namespace webhookd
