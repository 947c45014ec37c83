#pragma once

// Broker destinations (docs/brokers.md): a destination whose url names a message broker
// instead of an HTTP endpoint. The url's scheme chooses the transport
// (net/broker_url.h); `broker` holds that transport's settings.

#include <cstdint>
#include <optional>
#include <string>

namespace webhookd {

// The settings of a broker destination; each applies to one transport. `username` and
// `password` are write-only, like the signing secret.
struct BrokerSettings {
  std::optional<std::string> exchange;     // AMQP
  std::optional<std::string> routing_key;  // AMQP; default: the event type
  std::optional<std::string> subject;      // NATS; default: "webhooks.<type>"
  std::optional<std::string> stream;       // Redis
  std::optional<int64_t> max_len;          // Redis: MAXLEN ~ max_len
  std::optional<std::string> topic;        // Kafka
  std::optional<std::string> username;
  std::optional<std::string> password;
  bool operator==(const BrokerSettings&) const = default;
};

}  // namespace webhookd
