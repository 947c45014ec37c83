#pragma once

#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "base/clock.h"
#include "net/resolver.h"
#include "worker/async_sender.h"

namespace webhookd {

// Delivers to Redis Streams (docs/brokers.md): each message is one XADD to
// broker.stream (MAXLEN ~ broker.max_len when set) whose fields are `body` and each
// header, and the entry id Redis answers is the success. Anything else (no connection,
// refused credentials, an error reply, no answer within the attempt timeout) is an
// error with Redis's own words, so the attempt is retryable.
//
// One connection per destination URL and credentials, made on its first message after
// the host passed the private-address rule, and made again after a failure no sooner
// than a backoff (from 100 ms, doubling to 5 s) allows: messages meanwhile fail at once
// with the failure that began it.
//
// Threads: one per connection, made when its first message comes and joined by the
// destructor. Each sends its messages one at a time in the order Start was called, so a
// slow or lost Redis holds up only the destinations that name it.
class RedisTransport final : public AsyncSender {
 public:
  struct Options {
    Duration attempt_timeout = std::chrono::seconds(15);
    bool allow_private = false;
    Resolver* resolver = nullptr;  // null: a SystemResolver of its own
  };

  explicit RedisTransport(Options options);
  // Sends in progress finish; those not started end with not_started.
  ~RedisTransport() override;
  RedisTransport(const RedisTransport&) = delete;
  RedisTransport& operator=(const RedisTransport&) = delete;

  // AsyncSender:
  void Start(Outgoing request, Done done) override;
  void CancelUnstarted() override;

  // A connection and its thread; defined in the .cc.
  struct Connection;

 private:
  Options options_;
  std::unique_ptr<Resolver> own_resolver_;
  Resolver* resolver_;
  std::mutex mu_;
  std::map<std::string, std::unique_ptr<Connection>> connections_;  // guarded by mu_
};

}  // namespace webhookd
