#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>

#include "base/clock.h"

namespace webhookd {

// Failed authentications per client address, as a token bucket: an address may fail
// `per_minute` times in a burst, then once every 60 / `per_minute` seconds. An address
// out of tokens is answered 429 before its key is looked up, so a flood of made-up keys
// costs no database work and cannot crowd the API's connections out.
class FailedAuthLimiter {
 public:
  // `per_minute` 0 turns the limit off.
  FailedAuthLimiter(Clock& clock, int per_minute, size_t max_addresses = 100000);

  // Whole seconds until `address` may try again: 0 when it may now.
  int RetryAfter(const std::string& address);
  // Spends one token of `address`.
  void Failed(const std::string& address);

 private:
  // Tokens are counted in units of 1/60,000,000 so that a refill of `per_minute` tokens
  // a minute is `per_minute` units a microsecond: integer arithmetic, exact.
  static constexpr int64_t kToken = 60'000'000;
  struct Bucket {
    int64_t units;
    Timestamp at;
  };
  // The bucket refilled to now (callers hold mu_).
  Bucket& Refilled(const std::string& address, Timestamp now);

  Clock& clock_;
  const int64_t per_minute_;
  const size_t max_addresses_;
  std::mutex mu_;
  std::unordered_map<std::string, Bucket> buckets_;  // guarded by mu_
};

}  // namespace webhookd
