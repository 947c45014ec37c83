#pragma once

#include "worker/broker_connections.h"

namespace webhookd {

// Delivers to Redis Streams (docs/brokers.md): each message is one XADD to
// broker.stream (MAXLEN ~ broker.max_len when set) whose fields are `body` and each
// header, and the entry id Redis answers is the success. Anything else (no connection,
// refused credentials, an error reply, no answer within the attempt timeout) is an
// error with Redis's own words, so the attempt is retryable.
//
// One connection per destination URL and credentials (worker/broker_connections.h), made
// on its first message after the host passed the private-address rule, and made again
// after a failure no sooner than a backoff allows. Up to a window of XADDs are written
// before their replies are read (Redis answers in order), and no answer within the
// attempt timeout closes the connection.
class RedisTransport final : public BrokerConnections {
 public:
  explicit RedisTransport(Options options);
};

}  // namespace webhookd
