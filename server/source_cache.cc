#include "server/source_cache.h"

#include <algorithm>
#include <cmath>

namespace webhookd {
namespace {

// How often the copy is checked against the sources' generation: the longest a change
// made through another process may take to reach this one's verification.
constexpr auto kRecheck = std::chrono::seconds(1);

}  // namespace

SourceCache::SourceCache(SourceStore& store, int rate) : store_(store), rate_(std::max(1, rate)) {}

Result<std::shared_ptr<const SourceCache::Snapshot>> SourceCache::Current() {
  std::lock_guard lock(mu_);
  const auto now = std::chrono::steady_clock::now();
  if (snapshot_ && now - checked_at_ < kRecheck) return snapshot_;
  if (snapshot_) {
    auto generation = store_.SourceGeneration();
    if (!generation) return std::unexpected(generation.error());
    if (*generation == snapshot_->generation) {
      checked_at_ = now;
      return snapshot_;
    }
  }
  auto loaded = store_.LoadSources();
  if (!loaded) return std::unexpected(loaded.error());
  auto snapshot = std::make_shared<Snapshot>();
  snapshot->generation = loaded->generation;
  for (Source& source : loaded->sources) {
    const int64_t id = source.id;
    snapshot->sources.emplace(id, std::move(source));
  }
  snapshot_ = std::move(snapshot);
  checked_at_ = now;
  return snapshot_;
}

void SourceCache::Invalidate() {
  std::lock_guard lock(mu_);
  snapshot_.reset();
}

int SourceCache::Take(int64_t id) {
  std::lock_guard lock(rate_mu_);
  const auto now = std::chrono::steady_clock::now();
  auto [it, fresh] = buckets_.try_emplace(id, Bucket{rate_, now});
  Bucket& bucket = it->second;
  if (!fresh) {
    const double elapsed = std::chrono::duration<double>(now - bucket.at).count();
    bucket.tokens = std::min(rate_, bucket.tokens + elapsed * rate_);
    bucket.at = now;
  }
  if (bucket.tokens >= 1) {
    bucket.tokens -= 1;
    return 0;
  }
  return std::max(1, static_cast<int>(std::ceil((1 - bucket.tokens) / rate_)));
}

}  // namespace webhookd
