#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/broker.h"
#include "core/destination.h"

namespace webhookd {

// One signed request, ready to go.
struct Outgoing {
  std::string url;
  Headers headers;  // every header, webhook-* and custom ones included
  std::string body;
  // A client certificate to present and a CA to trust instead of the system's.
  std::optional<DestinationTls> tls = std::nullopt;
  // A broker destination's settings (docs/brokers.md); nullopt for HTTP.
  std::optional<BrokerSettings> broker = std::nullopt;
  // Whose it is: a broker connection is a tenant's, counted against its share
  // (worker/broker_limits.h), and a destination's connection whose key changed is closed.
  std::string tenant = {};     // "" for none
  int64_t destination_id = 0;  // 0: not known
};

struct SendResult {
  std::optional<int> status_code;  // nullopt: no response
  // A broker confirmed the message (docs/brokers.md): a success with no status code.
  bool acknowledged = false;
  std::optional<std::string> error;  // what went wrong on the way, if anything
  bool refused = false;              // not sent: the address is not allowed (permanent)
  bool timed_out = false;
  std::string body;                        // the first 4 KiB of the response body
  std::optional<std::string> retry_after;  // the Retry-After header, raw
  bool not_started = false;                // cancelled before it reached the network (AsyncSender)
  // The egress proxy could not be reached (or did not answer in time): the receiver was
  // never asked, so this says nothing about it.
  bool proxy_unreachable = false;
  // Not sent: webhookd's own limit was reached (its broker connections all in use). The
  // receiver was never asked, so, as for an unreachable proxy, this says nothing about it.
  bool at_capacity = false;
};

// Sends a delivery. Thread-safe.
class Sender {
 public:
  virtual ~Sender() = default;
  virtual SendResult Send(const Outgoing& request) = 0;
};

}  // namespace webhookd
