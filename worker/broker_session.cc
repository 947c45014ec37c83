#include "worker/broker_session.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "base/log.h"

namespace webhookd {

std::optional<SendResult> ReconnectBackoff::Waiting(
    std::chrono::steady_clock::time_point now) const {
  if (!failure_ || now >= retry_at_) return std::nullopt;
  return BrokerFailure(transport_ + ": not connected, trying again shortly after: " + *failure_);
}

SendResult ReconnectBackoff::Lost(std::string error, bool timed_out,
                                  std::chrono::steady_clock::time_point now) {
  failure_ = error;
  retry_at_ = now + backoff_;
  backoff_ = std::min<Duration>(backoff_ * 2, kLastBackoff);
  SendResult r = BrokerFailure(std::move(error));
  r.timed_out = timed_out;
  return r;
}

void ReconnectBackoff::Connected() {
  failure_.reset();
  backoff_ = kFirstBackoff;
}

SendResult BrokerFailure(std::string error) {
  SendResult r;
  r.error = std::move(error);
  return r;
}

std::expected<BrokerUrl, SendResult> BrokerUrlOf(const Outgoing& out, Transport transport,
                                                 std::string_view name) {
  auto url = ParseBrokerUrl(out.url);
  if (url && url->transport == transport) return *std::move(url);
  const std::string_view article = name.starts_with('a') ? "an" : "a";
  const std::string why =
      url ? "not " + std::string(article) + " " + std::string(name) + " URL" : url.error().message;
  return std::unexpected(BrokerFailure(std::string(name) + ": " + why));
}

SendResult BrokerRefused(const Error& error) {
  Log(LogLevel::kWarn, "a broker's address is not allowed", {{"detail", error.message}});
  SendResult r = BrokerFailure(std::string(kAddressNotAllowed));
  r.refused = true;
  return r;
}

std::string BrokerConnectionKey(const Outgoing& out) {
  std::string key = out.url;
  if (out.broker) {
    key += '\n' + out.broker->username.value_or("") + '\n' + out.broker->password.value_or("");
  }
  if (out.tls) {
    key += '\n' + out.tls->ca_certificate.value_or("") + '\n' +
           out.tls->client_certificate.value_or("") + '\n' + out.tls->client_key.value_or("");
  }
  return key;
}

std::optional<std::string> EventTypeOf(const std::string& body) {
  const auto json = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!json.is_object()) return std::nullopt;
  const auto type = json.find("type");
  if (type == json.end() || !type->is_string()) return std::nullopt;
  return type->get<std::string>();
}

}  // namespace webhookd
