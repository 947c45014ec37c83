#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <mutex>
#include <string>
#include <unordered_map>

#include "base/clock.h"

namespace webhookd {

// Failed authentications per client, as a token bucket: a client may fail `per_minute`
// times in a burst, then once every 60 / `per_minute` seconds. A client out of tokens is
// answered 429 before its key is looked up, so a flood of made-up keys costs no database
// work and cannot crowd the API's connections out.
//
// A client is what ClientOf makes of its address (an IPv6 address counts as its /64). At
// most `max_clients` are counted: a new one beyond that evicts the one seen least
// recently, so a flood of new addresses costs the oldest counts one at a time rather
// than clearing every count at once, and a client that keeps failing keeps its count.
class FailedAuthLimiter {
 public:
  // `per_minute` 0 turns the limit off.
  FailedAuthLimiter(Clock& clock, int per_minute, size_t max_clients = 100000);

  // Whole seconds until `address` may try again: 0 when it may now.
  int RetryAfter(const std::string& address);
  // Spends one token of `address`.
  void Failed(const std::string& address);

 private:
  // Tokens are counted in units of 1/60,000,000 so that a refill of `per_minute` tokens
  // a minute is `per_minute` units a microsecond: integer arithmetic, exact.
  static constexpr int64_t kToken = 60'000'000;
  struct Bucket {
    std::string client;
    int64_t units;
    Timestamp at;
  };
  using Recency = std::list<Bucket>;  // least recently seen first
  // The client's bucket refilled to now and made the most recent (callers hold mu_).
  Bucket& Refilled(const std::string& client, Timestamp now);

  Clock& clock_;
  const int64_t per_minute_;
  const size_t max_clients_;
  std::mutex mu_;
  Recency recency_;                                           // guarded by mu_
  std::unordered_map<std::string, Recency::iterator> index_;  // guarded by mu_
};

}  // namespace webhookd
