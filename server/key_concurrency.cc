#include "server/key_concurrency.h"

namespace webhookd {

KeyConcurrency::Slot::~Slot() {
  if (owner_ != nullptr) owner_->Release(key_);
}

std::optional<KeyConcurrency::Slot> KeyConcurrency::TryAcquire(const std::string& key) {
  std::lock_guard lock(mu_);
  int& n = in_progress_[key];
  if (n >= limit_) {
    if (n == 0) in_progress_.erase(key);
    return std::nullopt;
  }
  ++n;
  return Slot(*this, key);
}

int KeyConcurrency::InProgress(const std::string& key) {
  std::lock_guard lock(mu_);
  auto it = in_progress_.find(key);
  return it == in_progress_.end() ? 0 : it->second;
}

void KeyConcurrency::Release(const std::string& key) {
  std::lock_guard lock(mu_);
  auto it = in_progress_.find(key);
  if (it == in_progress_.end()) return;
  if (--it->second <= 0) in_progress_.erase(it);
}

}  // namespace webhookd
