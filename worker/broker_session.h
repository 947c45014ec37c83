#pragma once

#include <chrono>
#include <cstdint>
#include <expected>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/clock.h"
#include "net/broker_url.h"
#include "net/lookup_shares.h"
#include "net/resolver.h"
#include "worker/broker_limits.h"
#include "worker/sender.h"

namespace webhookd {

// What every broker transport is made with (worker/broker_connections.h).
struct BrokerOptions {
  Duration attempt_timeout = std::chrono::seconds(15);
  bool allow_private = false;
  Resolver* resolver = nullptr;  // null: a SystemResolver of the transport's own
  // Messages sent on one connection before the first of them is answered. A broker
  // answers after its own write (RabbitMQ and JetStream after the disk's), so one at a
  // time would cost a round trip and a write per message. Order is unaffected: the
  // dispatcher sends a fifo key's next message only once the previous one is answered.
  int window = 64;
  // What every transport of a worker shares; null: the transport makes its own.
  std::shared_ptr<BrokerLimits> limits;   // the connections open at once
  std::shared_ptr<LookupShares> lookups;  // each tenant's share of the resolver (8)
  // When a connection was last used, for idle_timeout; null: the system's clock.
  Clock* clock = nullptr;
  // A connection with nothing to send for this long is closed.
  Duration idle_timeout = std::chrono::minutes(5);
};

using Ticket = uint64_t;

// The answer to the message sent with `ticket`.
struct Answer {
  Ticket ticket = 0;
  SendResult result;
};
using Answers = std::vector<Answer>;

// One connection to a broker, made and used by one thread (BrokerConnections' thread for
// it), with up to a window of messages in flight. Every message begun gets one answer,
// pushed to the `answers` of Begin, Await or Expire; an answer for a ticket no longer in
// flight is dropped, so a session may answer late or twice without harm.
class BrokerSession {
 public:
  virtual ~BrokerSession() = default;

  // Whether `next` may be sent while others are in flight; false holds it (and all after
  // it) until every message in flight is answered. True when none is in flight.
  virtual bool Joins(const Outgoing& next) = 0;

  // Sends `out` (connecting first when not connected). Its answer goes to `answers` now
  // or from a later Await; a lost connection answers every message in flight at once.
  virtual void Begin(const Outgoing& out, Ticket ticket, Answers& answers) = 0;

  // Reads the broker's answers until one has come or `until`, and never past `until`
  // (beyond one read): a broker that sends without end must not keep the thread from the
  // deadlines of what is in flight, nor from the messages queued behind them.
  virtual void Await(std::chrono::steady_clock::time_point until, Answers& answers) = 0;

  // `expired` had no answer within the attempt timeout. The session answers them, and
  // what that says of its connection is its own call; any it leaves are answered as
  // timed out.
  virtual void Expire(std::span<const Ticket> expired, Answers& answers) = 0;
};

// A session's connect backoff: after a failure the connection is not made again for
// 100 ms, doubling up to 5 s, and its messages meanwhile fail at once with the failure
// that began it.
class ReconnectBackoff {
 public:
  // `transport` begins every error: "amqp".
  explicit ReconnectBackoff(std::string_view transport) : transport_(transport) {}

  // The answer for a message while the backoff runs; nullopt when a connect may be tried.
  std::optional<SendResult> Waiting(std::chrono::steady_clock::time_point now) const;
  // Records a lost connection; `error` as an answer.
  SendResult Lost(std::string error, bool timed_out, std::chrono::steady_clock::time_point now);
  void Connected();

 private:
  std::string transport_;
  std::optional<std::string> failure_;
  std::chrono::steady_clock::time_point retry_at_;
  Duration backoff_ = kFirstBackoff;

  static constexpr Duration kFirstBackoff = std::chrono::milliseconds(100);
  static constexpr Duration kLastBackoff = std::chrono::seconds(5);
};

// An error as an answer.
SendResult BrokerFailure(std::string error);

// The message's URL, parsed; the answer instead when it is not a URL of `transport`, in
// words beginning with `name` ("amqp: not an amqp URL").
std::expected<BrokerUrl, SendResult> BrokerUrlOf(const Outgoing& out, Transport transport,
                                                 std::string_view name);

// The answer for a broker host the private-address rule refuses (a permanent failure;
// the detail goes to the operator's log only).
SendResult BrokerRefused(const Error& error);

// The connection a message goes over: its URL, credentials and TLS settings, so that a
// destination whose password or CA changed gets a connection of its own.
std::string BrokerConnectionKey(const Outgoing& out);

// The body's top-level "type" member, when a string.
std::optional<std::string> EventTypeOf(const std::string& body);

}  // namespace webhookd
