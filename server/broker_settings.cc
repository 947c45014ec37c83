#include "server/broker_settings.h"

#include <algorithm>
#include <string>
#include <string_view>

namespace webhookd {
namespace {

constexpr int64_t kMaxStreamLength = 1'000'000'000;

bool Visible(std::string_view s) {
  return std::ranges::all_of(s, [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u > 0x20 && u < 0x7f;
  });
}

// AMQP names an exchange with these (RabbitMQ refuses others); "" is the default exchange.
bool IsExchangeName(std::string_view s) {
  return s.size() <= 127 && std::ranges::all_of(s, [](char c) {
           return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '-' || c == '_' || c == '.' || c == ':';
         });
}

// A subject to publish on: tokens separated by dots, none empty and none a wildcard.
bool IsNatsSubject(std::string_view s) {
  if (s.empty() || s.size() > 255 || !Visible(s)) return false;
  size_t start = 0;
  while (true) {
    const size_t dot = s.find('.', start);
    const std::string_view token = s.substr(start, dot - start);
    if (token.empty() || token == "*" || token == ">") return false;
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

// Kafka's own rule for a topic name.
bool IsKafkaTopic(std::string_view s) {
  return !s.empty() && s.size() <= 249 && s != "." && s != ".." &&
         std::ranges::all_of(s, [](char c) {
           return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '-' || c == '_' || c == '.';
         });
}

bool IsName(std::string_view s) { return !s.empty() && s.size() <= 255 && Visible(s); }

bool IsCredential(std::string_view s) {
  return !s.empty() && s.size() <= 1024 && s.find('\0') == std::string_view::npos;
}

struct TextSetting {
  const char* name;
  std::optional<std::string> BrokerSettings::*slot;
  bool (*valid)(std::string_view);
  const char* rule;
};

constexpr TextSetting kTextSettings[] = {
    {"exchange", &BrokerSettings::exchange, IsExchangeName,
     "must be an exchange name: up to 127 of A-Z a-z 0-9 - _ . : (\"\" is the default exchange)"},
    {"routing_key", &BrokerSettings::routing_key, IsName,
     "must be 1 to 255 visible ASCII characters"},
    {"subject", &BrokerSettings::subject, IsNatsSubject,
     "must be a NATS subject to publish on: dot-separated tokens of visible ASCII, no "
     "wildcards, at most 255 characters"},
    {"stream", &BrokerSettings::stream, IsName, "must be 1 to 255 visible ASCII characters"},
    {"topic", &BrokerSettings::topic, IsKafkaTopic,
     "must be a Kafka topic: 1 to 249 of A-Z a-z 0-9 . _ -"},
    {"username", &BrokerSettings::username, IsCredential,
     "must be a string of 1 to 1024 bytes without NUL"},
    {"password", &BrokerSettings::password, IsCredential,
     "must be a string of 1 to 1024 bytes without NUL"},
};

// Which settings each transport reads; the credentials fit every broker.
bool Fits(Transport transport, std::string_view setting) {
  if (setting == "username" || setting == "password") {
    return transport != Transport::kHttp && transport != Transport::kFeed;
  }
  switch (transport) {
    case Transport::kAmqp:
      return setting == "exchange" || setting == "routing_key";
    case Transport::kNats:
      return setting == "subject";
    case Transport::kRedis:
      return setting == "stream" || setting == "max_len";
    case Transport::kKafka:
      return setting == "topic";
    case Transport::kHttp:
    case Transport::kFeed:
      return false;
  }
  return false;
}

}  // namespace

void ParseBrokerMember(const Json& value, DestinationFields& out, std::vector<FieldError>& errors) {
  if (value.is_null()) {
    out.broker = std::optional<BrokerSettings>();
    return;
  }
  if (!value.is_object()) {
    errors.push_back({"broker", "must be an object or null"});
    return;
  }
  const size_t before = errors.size();
  CheckMembers(value,
               {{"exchange", "routing_key", "subject", "stream", "max_len", "topic", "username",
                 "password"}},
               "broker.", errors);
  BrokerSettings broker;
  for (const TextSetting& setting : kTextSettings) {
    auto it = value.find(setting.name);
    if (it == value.end() || it->is_null()) continue;
    if (!it->is_string() || !setting.valid(it->get_ref<const std::string&>())) {
      errors.push_back({std::string("broker.") + setting.name, setting.rule});
      continue;
    }
    broker.*setting.slot = it->get<std::string>();
  }
  if (auto it = value.find("max_len"); it != value.end() && !it->is_null()) {
    if (!it->is_number_integer() || it->get<int64_t>() < 1 ||
        it->get<int64_t>() > kMaxStreamLength) {
      errors.push_back({"broker.max_len", "must be an integer from 1 to 1000000000"});
    } else {
      broker.max_len = it->get<int64_t>();
    }
  }
  if (errors.size() != before) return;
  out.broker = std::optional<BrokerSettings>(std::move(broker));
}

Json BrokerSettingsJson(const std::optional<BrokerSettings>& broker) {
  if (!broker) return nullptr;
  Json j = Json::object();
  for (const TextSetting& setting : kTextSettings) {
    const std::optional<std::string>& v = (*broker).*setting.slot;
    if (!v) continue;
    const bool credential =
        setting.slot == &BrokerSettings::username || setting.slot == &BrokerSettings::password;
    j[setting.name] = credential ? std::string(kHiddenHeaderValue) : *v;
  }
  if (broker->max_len) j["max_len"] = *broker->max_len;
  return j;
}

std::vector<FieldError> BrokerSettingsProblems(const DestinationAddress& address,
                                               const std::optional<BrokerSettings>& broker) {
  const Transport transport = address.transport;
  std::vector<FieldError> problems;
  if (address.scheme == "rediss") {
    problems.push_back({"url",
                        "rediss (Redis over TLS) is not available in this build: its hiredis "
                        "has no TLS"});
  }
  if (transport == Transport::kHttp || transport == Transport::kFeed) {
    if (broker)
      problems.push_back({"broker", "is for a broker url only: send null for an http one"});
    return problems;
  }
  if (broker) {
    for (const TextSetting& setting : kTextSettings) {
      if ((*broker).*setting.slot && !Fits(transport, setting.name)) {
        problems.push_back(
            {std::string("broker.") + setting.name,
             "is not a setting of a " + std::string(TransportName(transport)) + " url"});
      }
    }
    if (broker->max_len && !Fits(transport, "max_len")) {
      problems.push_back({"broker.max_len", "is not a setting of a " +
                                                std::string(TransportName(transport)) + " url"});
    }
  }
  const auto required = [&](const char* name, bool given) {
    if (!given) {
      problems.push_back({std::string("broker.") + name,
                          "is required for a " + std::string(TransportName(transport)) + " url"});
    }
  };
  if (transport == Transport::kRedis) required("stream", broker && broker->stream);
  if (transport == Transport::kKafka) required("topic", broker && broker->topic);
  if ((broker && broker->username) && !broker->password) {
    problems.push_back({"broker.password", "is required with broker.username"});
  }
  return problems;
}

}  // namespace webhookd
