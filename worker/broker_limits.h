#pragma once

#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

namespace webhookd {

// The broker connections one worker process may have open at once, every transport
// together (WEBHOOKD_MAX_BROKER_CONNECTIONS), and of those, one tenant's: without the
// second, one tenant's destinations would take every connection (and the threads each
// holds) from the rest. A connection counts from the moment it is made until its thread
// has ended, so a connection being closed still counts.
class BrokerLimits {
 public:
  static constexpr int kDefaultTotal = 256;
  static constexpr int kPerTenant = 16;

  explicit BrokerLimits(int total = kDefaultTotal, int per_tenant = kPerTenant)
      : total_(total), per_tenant_(per_tenant) {}

  // Why a connection may not be made.
  struct Full {
    bool tenant = false;  // the tenant's share is taken (else the worker's whole)
    std::string error;    // the words for an attempt that found none free
  };

  // Takes one connection for `tenant` ("" for none); nullopt when it may be made.
  std::optional<Full> Take(const std::string& tenant);
  void Release(const std::string& tenant);

  int open() const;
  int open(const std::string& tenant) const;

 private:
  const int total_;
  const int per_tenant_;
  mutable std::mutex mu_;
  int open_ = 0;                                // guarded by mu_
  std::unordered_map<std::string, int> taken_;  // guarded by mu_; no entry: none
};

}  // namespace webhookd
