#pragma once

#include <cstddef>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

namespace webhookd {

// How many requests of one route each API key may have in progress at once. A route
// whose work a key can make slow (POST /v1/filters/test evaluates what the caller wrote)
// would otherwise let one key hold as many of the API's database connections as it opens
// requests; with a limit it holds at most that many, and each of its others is answered
// 429 at once.
class KeyConcurrency {
 public:
  explicit KeyConcurrency(int limit) : limit_(limit) {}
  KeyConcurrency(const KeyConcurrency&) = delete;
  KeyConcurrency& operator=(const KeyConcurrency&) = delete;

  // One request of a key in progress; its destruction ends it.
  class Slot {
   public:
    Slot(KeyConcurrency& owner, std::string key) : owner_(&owner), key_(std::move(key)) {}
    Slot(Slot&& other) noexcept : owner_(other.owner_), key_(std::move(other.key_)) {
      other.owner_ = nullptr;
    }
    Slot(const Slot&) = delete;
    Slot& operator=(const Slot&) = delete;
    Slot& operator=(Slot&&) = delete;
    ~Slot();

   private:
    KeyConcurrency* owner_;
    std::string key_;
  };

  // A slot for `key`, or nullopt when it has `limit` in progress already.
  std::optional<Slot> TryAcquire(const std::string& key);
  // Requests of `key` in progress now.
  int InProgress(const std::string& key);

 private:
  void Release(const std::string& key);

  const int limit_;
  std::mutex mu_;
  // Only keys with a request in progress: the map is as large as the requests are many.
  std::unordered_map<std::string, int> in_progress_;  // guarded by mu_
};

}  // namespace webhookd
