#include "client/publisher.h"

#include <utility>

#include "base/encoding.h"

namespace webhookd::client {
namespace {

std::string Describe(const TransportError& error) {
  switch (error.kind) {
    case TransportError::Kind::kConnect:
      return "could not connect: " + error.message;
    case TransportError::Kind::kTimeout:
      return "timed out: " + error.message;
    case TransportError::Kind::kIo:
      return "connection broke: " + error.message;
  }
  return error.message;
}

std::string Attempts(int n) { return std::to_string(n) + (n == 1 ? " attempt" : " attempts"); }

}  // namespace

std::string NewIdempotencyKey() { return "send-" + HexEncode(SecureRandomBytes(16)); }

Publisher::Publisher(Deps deps, std::string api_key, std::string path)
    : deps_(deps), authorization_("Bearer " + std::move(api_key)), path_(std::move(path)) {}

PublishResult Publisher::Publish(const Event& event) {
  PublishResult result;
  result.idempotency_key = event.idempotency_key ? *event.idempotency_key : NewIdempotencyKey();
  // Built once: the API ties the key to the body's hash, so every retry must send the
  // very same bytes.
  HttpRequest request{path_,
                      {{"Authorization", authorization_},
                       {"Content-Type", "application/json"},
                       {"Idempotency-Key", result.idempotency_key}},
                      EventBody(event)};
  if (event.traceparent) request.headers.emplace_back("traceparent", *event.traceparent);
  if (event.tracestate) request.headers.emplace_back("tracestate", *event.tracestate);

  deps_.budget.RecordRequest();
  while (true) {
    ++result.attempts;
    const TransportResult sent = deps_.transport.Send(request);
    std::optional<std::string_view> retry_after;
    if (sent) {
      result.status = sent->status;
      result.body = sent->body;
      switch (ClassifyStatus(sent->status)) {
        case StatusClass::kAccepted:
          result.outcome = PublishResult::Outcome::kAccepted;
          result.error.clear();
          return result;
        case StatusClass::kRefused:
          result.outcome = PublishResult::Outcome::kRefused;
          result.error = "HTTP " + std::to_string(sent->status);
          return result;
        case StatusClass::kUnexpected:
          result.outcome = PublishResult::Outcome::kGaveUp;
          result.error = "HTTP " + std::to_string(sent->status) + ": not an answer of webhookd";
          return result;
        case StatusClass::kRetry:
          result.error = "HTTP " + std::to_string(sent->status);
          if (sent->retry_after) retry_after = *sent->retry_after;
          break;
      }
    } else {
      result.status = 0;
      result.body.clear();
      result.error = Describe(sent.error());
    }

    result.outcome = PublishResult::Outcome::kGaveUp;
    const int max_attempts = deps_.schedule.options().max_attempts;
    if (result.attempts >= max_attempts) {
      result.error += " (gave up after " + Attempts(result.attempts) + ")";
      return result;
    }
    const std::optional<Duration> wait =
        deps_.schedule.WaitAfter(result.attempts, retry_after, deps_.clock.Now(), deps_.random);
    if (!wait) {
      result.error += " (not retried: Retry-After " + std::string(retry_after.value_or("")) +
                      " is longer than the longest wait)";
      return result;
    }
    if (!deps_.budget.TryRetry()) {
      result.error += " (not retried after " + Attempts(result.attempts) +
                      ": the retry budget is spent, too many requests are failing)";
      return result;
    }
    deps_.sleeper.Sleep(*wait);
  }
}

}  // namespace webhookd::client
