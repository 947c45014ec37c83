#pragma once

#include "worker/broker_connections.h"

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
// settings (worker/broker_connections.h), made on its first message after the host
// passed the private-address rule, and made again after a failure no sooner than a
// backoff allows. Up to a window of messages are published before their confirms are
// read; each basic.ack or basic.nack (`multiple` included) settles the messages it names
// by delivery tag. A channel the broker closed (say, for an exchange that does not exist)
// fails what was in flight on it and is opened again on the next message, at once, as
// its connection still stands.
class AmqpTransport final : public BrokerConnections {
 public:
  explicit AmqpTransport(Options options);
};

}  // namespace webhookd
