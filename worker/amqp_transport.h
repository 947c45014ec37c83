#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "base/clock.h"
#include "net/resolver.h"
#include "worker/async_sender.h"

namespace webhookd {

// Delivers to an AMQP 0-9-1 broker such as RabbitMQ (docs/brokers.md): each message is
// one basic.publish to broker.exchange (the default exchange when absent) with the routing
// key broker.routing_key (the event type when absent), mandatory, on a channel in confirm
// mode; the broker's basic.ack is the success. The body is the webhook's; each header
// travels in the message's headers table (names in lowercase), webhook-id is also its
// message-id, and it is persistent. A basic.return (no queue took it), a basic.nack, a
// closed channel or connection, refused credentials, or no answer within the attempt
// timeout are errors with the broker's own words, so the attempt is retryable.
//
// amqps is TLS: the broker's certificate must chain to the destination's tls.ca_certificate
// (the system's CAs without one) and name the URL's host; tls.client_certificate and
// client_key, when given, are presented.
//
// One connection (and one channel on it) per destination URL, credentials and TLS
// settings, made on its first message after the host passed the private-address rule,
// and made again after a failure no sooner than a backoff (from 100 ms, doubling to 5 s)
// allows: messages meanwhile fail at once with the failure that began it. A channel the
// broker closed (say, for an exchange that does not exist) is opened again on the next
// message, at once, as its connection still stands.
//
// Threads: one per connection, made when its first message comes and joined by the
// destructor. Each sends its messages one at a time in the order Start was called, so a
// slow or lost broker holds up only the destinations that name it.
class AmqpTransport final : public AsyncSender {
 public:
  struct Options {
    Duration attempt_timeout = std::chrono::seconds(15);
    bool allow_private = false;
    Resolver* resolver = nullptr;  // null: a SystemResolver of its own
  };

  explicit AmqpTransport(Options options);
  // Sends in progress finish; those not started end with not_started.
  ~AmqpTransport() override;
  AmqpTransport(const AmqpTransport&) = delete;
  AmqpTransport& operator=(const AmqpTransport&) = delete;

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
