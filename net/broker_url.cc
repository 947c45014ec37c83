#include "net/broker_url.h"

#include "base/strings.h"

namespace webhookd {
namespace {

int DefaultPort(std::string_view scheme) {
  if (scheme == "amqp") return 5672;
  if (scheme == "amqps") return 5671;
  if (scheme == "nats" || scheme == "tls") return 4222;
  if (scheme == "redis" || scheme == "rediss") return 6379;
  return 9092;  // kafka
}

}  // namespace

std::string_view TransportName(Transport transport) {
  switch (transport) {
    case Transport::kHttp:
      return "http";
    case Transport::kAmqp:
      return "amqp";
    case Transport::kNats:
      return "nats";
    case Transport::kRedis:
      return "redis";
    case Transport::kKafka:
      return "kafka";
    case Transport::kFeed:
      return "feed";
  }
  return "http";
}

std::optional<Transport> TransportOfScheme(std::string_view scheme) {
  if (scheme == "http" || scheme == "https") return Transport::kHttp;
  if (scheme == "amqp" || scheme == "amqps") return Transport::kAmqp;
  if (scheme == "nats" || scheme == "tls") return Transport::kNats;
  if (scheme == "redis" || scheme == "rediss") return Transport::kRedis;
  if (scheme == "kafka") return Transport::kKafka;
  if (scheme == "feed") return Transport::kFeed;
  return std::nullopt;
}

Result<BrokerUrl> ParseBrokerUrl(std::string_view text) {
  if (auto refused = RefuseUrlText(text)) return std::unexpected(*refused);
  const size_t colon = text.find("://");
  if (colon == std::string_view::npos) {
    return Fail(ErrorKind::kInvalid, "URL must be absolute (scheme://host)");
  }
  BrokerUrl url;
  url.scheme = Lower(text.substr(0, colon));
  const auto transport = TransportOfScheme(url.scheme);
  if (!transport || *transport == Transport::kHttp || *transport == Transport::kFeed) {
    return Fail(ErrorKind::kInvalid,
                "URL scheme must be http, https, amqp, amqps, nats, tls, redis, rediss or kafka");
  }
  url.transport = *transport;
  url.tls = url.scheme == "amqps" || url.scheme == "tls" || url.scheme == "rediss";
  std::string_view rest = text.substr(colon + 3);
  if (rest.find_first_of("?#") != std::string_view::npos) {
    return Fail(ErrorKind::kInvalid, "a broker URL takes no query or fragment");
  }
  const size_t slash = rest.find('/');
  const std::string_view authority = rest.substr(0, slash);
  if (slash != std::string_view::npos) url.path = std::string(rest.substr(slash + 1));
  if (authority.find('@') != std::string_view::npos) {
    return Fail(ErrorKind::kInvalid,
                "URL must not contain user-info; give broker.username and broker.password");
  }
  size_t start = 0;
  while (true) {
    const size_t comma = authority.find(',', start);
    auto host = ParseAuthority(authority.substr(start, comma - start), DefaultPort(url.scheme));
    if (!host) return std::unexpected(host.error());
    url.hosts.push_back(std::move(*host));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  if (url.hosts.size() > 1 && url.transport != Transport::kKafka) {
    return Fail(ErrorKind::kInvalid, "only a kafka URL names several hosts");
  }
  if (url.hosts.size() > 16) return Fail(ErrorKind::kInvalid, "a kafka URL names at most 16 hosts");
  switch (url.transport) {
    case Transport::kRedis:
      if (url.path.empty()) url.path = "0";
      if (!ParseBoundedInt(url.path, 0, 15)) {
        return Fail(ErrorKind::kInvalid, "a redis URL's path is a database number, 0..15");
      }
      break;
    case Transport::kAmqp:
      if (url.path.empty()) url.path = "/";
      break;
    case Transport::kNats:
    case Transport::kKafka:
      if (!url.path.empty()) return Fail(ErrorKind::kInvalid, "this URL takes no path");
      break;
    case Transport::kHttp:
    case Transport::kFeed:
      break;
  }
  return url;
}

Transport TransportOfUrl(std::string_view url) {
  const size_t colon = url.find(':');
  if (colon == std::string_view::npos) return Transport::kHttp;
  return TransportOfScheme(Lower(url.substr(0, colon))).value_or(Transport::kHttp);
}

Result<DestinationAddress> ParseDestinationAddress(std::string_view text) {
  if (TransportOfUrl(text) == Transport::kFeed) {
    if (text != kFeedUrl) return Fail(ErrorKind::kInvalid, "a feed's url is exactly feed:");
    return DestinationAddress{Transport::kFeed, "feed", {}};
  }
  const size_t colon = text.find("://");
  const auto transport = colon == std::string_view::npos
                             ? std::nullopt
                             : TransportOfScheme(Lower(text.substr(0, colon)));
  if (transport && *transport != Transport::kHttp) {
    WEBHOOKD_ASSIGN_OR_RETURN(BrokerUrl url, ParseBrokerUrl(text));
    return DestinationAddress{url.transport, std::move(url.scheme), std::move(url.hosts)};
  }
  auto url = ParseUrl(text);
  if (!url) {
    if (colon != std::string_view::npos && !transport) {
      return Fail(ErrorKind::kInvalid,
                  "URL scheme must be http, https, amqp, amqps, nats, tls, redis, rediss or kafka");
    }
    return std::unexpected(url.error());
  }
  return DestinationAddress{
      Transport::kHttp, std::move(url->scheme), {HostPort{std::move(url->host), url->port}}};
}

}  // namespace webhookd
