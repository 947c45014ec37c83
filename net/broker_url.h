#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "net/url.h"

namespace webhookd {

// What carries a destination's messages, by its url's scheme.
// kFeed: a destination whose url is exactly `feed:` is read by its consumer (docs/feeds.md),
// never sent to.
enum class Transport { kHttp, kAmqp, kNats, kRedis, kKafka, kFeed };

// A feed destination's url, the whole of it.
inline constexpr std::string_view kFeedUrl = "feed:";

std::string_view TransportName(
    Transport transport);  // "http", "amqp", "nats", "redis", "kafka", "feed"

// http and https: kHttp; amqp, amqps: kAmqp; nats, tls: kNats; redis, rediss: kRedis;
// kafka: kKafka; feed: kFeed. nullopt for any other scheme. `scheme` in lowercase.
std::optional<Transport> TransportOfScheme(std::string_view scheme);

// The transport of a stored url's scheme (any case); kHttp for a scheme of none, which
// the HTTP sender then refuses in its own words.
Transport TransportOfUrl(std::string_view url);

// A broker destination's url (docs/brokers.md): `scheme://host[:port][,host[:port]...][/path]`.
struct BrokerUrl {
  std::string scheme;  // lowercase: amqp, amqps, nats, tls, redis, rediss, kafka
  Transport transport = Transport::kAmqp;
  bool tls = false;             // amqps, tls, rediss
  std::vector<HostPort> hosts;  // one, except for kafka (its bootstrap servers)
  std::string path;             // without its leading "/": the AMQP vhost, the Redis db
};

// A url of a broker scheme, at most kMaxUrlLength characters, with no user-info (the
// credentials are broker.username and broker.password), no query or fragment. The Redis
// path is a database number (0 when absent); the AMQP path is the vhost ("/" when
// absent); NATS takes no path; only Kafka takes several hosts. kInvalid with a reason
// otherwise, and for http and https (not a broker).
Result<BrokerUrl> ParseBrokerUrl(std::string_view text);

// Where a destination's url points, whatever its transport: what the private-address rule
// vets (every host) and what tells one receiver from another (scheme and hosts).
struct DestinationAddress {
  Transport transport = Transport::kHttp;
  std::string scheme;           // lowercase
  std::vector<HostPort> hosts;  // one, except for kafka
  bool operator==(const DestinationAddress&) const = default;
};

// An http or https URL (ParseUrl), a broker's (ParseBrokerUrl), or exactly `feed:` (a feed
// names no host); the reason of the
// parser its scheme names otherwise.
Result<DestinationAddress> ParseDestinationAddress(std::string_view text);

}  // namespace webhookd
