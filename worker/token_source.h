#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "core/destination.h"
#include "worker/async_sender.h"

namespace webhookd {

// OAuth 2.0 client-credentials tokens for destinations (RFC 6749 section 4.4;
// docs/egress.md), cached per process: a token is used until 60 s before its expires_in
// runs out, and while one is being fetched for a destination everyone else asking for it
// waits for that one request. A change of the destination's credentials is a new cache
// entry. Tokens live in memory only and are never logged; errors never quote them.
//
// The cache is bounded: at `max_entries`, a new entry first drops those no longer usable,
// then those that run out soonest, down to three quarters of it (never one being fetched
// or waited for).
// A token dropped that way is fetched again when next asked for.
//
// Threads: none of its own. Get and Drop may be called from any thread; `done` runs on
// the caller's thread for a cached token, else on the sender's when the fetch ends.
class TokenSource {
 public:
  struct Token {
    std::optional<std::string> value;  // nullopt: none; `error` says why
    std::string error;                 // "token request failed: <status or reason>"
    bool not_started = false;          // the sender handed the request back (shutdown)
  };
  using Done = std::function<void(Token)>;

  // Borrows both; they must outlive this.
  TokenSource(AsyncSender& sender, Clock& clock, size_t max_entries = kMaxEntries);

  void Get(int64_t destination_id, const DestinationAuth& auth, Done done);
  // The receiver refused `token` (a 401): it is not handed out again.
  void Drop(int64_t destination_id, const std::string& token);

  // A token is used until this long before it expires.
  static constexpr Duration kMargin = std::chrono::seconds(60);
  // How long a token whose answer has no usable expires_in is taken to last, and the
  // longest an answer's expires_in counts for.
  static constexpr std::chrono::seconds kDefaultLifetime{300};
  static constexpr std::chrono::seconds kMaxLifetime{24 * 3600};
  static constexpr size_t kMaxEntries = 10'000;

  // An answer's expires_in as a lifetime: an integer or a fraction of seconds, clamped
  // to [0, kMaxLifetime]; anything else (absent, a string, not finite) is
  // kDefaultLifetime. The token endpoint is the tenant's: nothing it says may overflow.
  static std::chrono::seconds LifetimeOf(const nlohmann::json& expires_in);

  size_t cached() const;

  // The token request of RFC 6749 section 4.4.2, client authenticated with HTTP Basic.
  static Outgoing Request(const DestinationAuth& auth);

 private:
  struct Entry {
    std::string token;
    Timestamp usable_until;
    bool fetching = false;
    std::vector<Done> waiting;
  };
  void Fetched(const std::pair<int64_t, std::string>& key, SendResult result, Timestamp asked);
  // Makes room for a new entry as the class comment says.
  void Trim(Timestamp now);

  AsyncSender& sender_;
  Clock& clock_;
  const size_t max_entries_;
  mutable std::mutex mu_;
  std::map<std::pair<int64_t, std::string>, Entry> entries_;  // by (destination, credentials)
};

}  // namespace webhookd
