// The feed routes (docs/feeds.md): a feed destination's messages are read, acked and
// nacked by its consumer instead of being pushed to it.
#include <charconv>
#include <memory>
#include <set>

#include "base/duration.h"
#include "base/log.h"
#include "base/random.h"
#include "core/delivery_body.h"
#include "core/retry_policy.h"
#include "core/signing.h"
#include "net/broker_url.h"
#include "server/api.h"
#include "server/api_request.h"
#include "server/feed_trace.h"
#include "server/feed_waiters.h"

namespace webhookd {

using namespace api;

namespace {

constexpr int kDefaultFeedLimit = 100;
constexpr Duration kDefaultLease = std::chrono::seconds(30);
constexpr Duration kLongestLease = std::chrono::hours(12);
constexpr size_t kMaxIds = 1000;
constexpr Duration kLongestWait = std::chrono::seconds(30);
// A nack's retry_in: as long as the longest Retry-After a receiver may ask for.
constexpr Duration kLongestRetryIn = RetryPolicy::kMaxRetryAfter;

// The destination of the route when it is a feed the caller may read: another tenant's is
// unknown (404), a push destination's messages are not for reading (409) unless it falls
// back to its feed.
Result<Destination> FeedOf(DestinationStore& destinations, const ApiRequest& req) {
  WEBHOOKD_ASSIGN_OR_RETURN(int64_t id, PathId(req, kDestinationPrefix, "destination"));
  WEBHOOKD_ASSIGN_OR_RETURN(Destination d, destinations.GetDestination(id, req.scope));
  if (TransportOfUrl(d.url) != Transport::kFeed && d.fallback != Fallback::kFeed) {
    return Fail(ErrorKind::kConflict,
                "this destination is pushed to: only a destination whose url is feed:, or "
                "whose fallback is feed, is read");
  }
  return d;
}

// What a read asks: a feed the caller may read, and how.
struct FeedRead {
  Destination feed;
  int limit = kDefaultFeedLimit;
  Duration lease = kDefaultLease;
  Duration wait{0};
};

// `wait`: whole seconds ("10") or a duration ("10s", "1500ms"), at most 30 s.
std::optional<Duration> ParseWait(std::string_view text) {
  int64_t seconds = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), seconds);
  std::optional<Duration> wait;
  if (!text.empty() && ec == std::errc() && end == text.data() + text.size()) {
    if (seconds >= 0 && seconds <= 30) wait = std::chrono::seconds(seconds);
  } else if (auto parsed = ParseDuration(text)) {
    wait = *parsed;
  }
  if (!wait || *wait < Duration{0} || *wait > kLongestWait) return std::nullopt;
  return wait;
}

Result<FeedRead> ParseFeedRead(DestinationStore& destinations, const ApiRequest& req) {
  FeedRead out;
  WEBHOOKD_ASSIGN_OR_RETURN(out.feed, FeedOf(destinations, req));
  std::vector<FieldError> errors;
  out.limit = ParseLimit(req, errors, kDefaultFeedLimit);
  if (auto text = QueryValue(req, "lease")) {
    auto parsed = ParseDuration(*text);
    if (!parsed || *parsed < std::chrono::seconds(1) || *parsed > kLongestLease) {
      errors.push_back({"lease", "must be a duration from 1s to 12h, as \"30s\""});
    } else {
      out.lease = *parsed;
    }
  }
  if (auto text = QueryValue(req, "wait")) {
    if (auto wait = ParseWait(*text)) {
      out.wait = *wait;
    } else {
      errors.push_back({"wait", "must be from 0 to 30 seconds, as \"10\" or \"10s\""});
    }
  }
  if (!errors.empty()) return Invalid(std::move(errors));
  return out;
}

// The call as its span names it.
FeedCall CallOf(const Destination& d, FeedCall::Kind kind) {
  FeedCall call;
  call.kind = kind;
  call.destination_id = FormatId(kDestinationPrefix, d.id);
  call.path = "/v1/destinations/" + call.destination_id + "/messages" +
              (kind == FeedCall::Kind::kAck    ? "/ack"
               : kind == FeedCall::Kind::kNack ? "/nack"
                                               : "");
  call.tenant_id = d.tenant_id;
  return call;
}

// A message as its consumer reads it: the body an HTTP attempt would carry, signed now
// with every secret that signs, as the sender signs it.
Json MessageJson(const ClaimedDelivery& m, Timestamp now) {
  const std::string webhook_id = FormatId(kEventPrefix, m.event_id);
  const std::string body = DeliveryBody(m.event_type, m.event_created_at, m.payload);
  const int64_t timestamp = UnixSeconds(now);
  const auto signature = SignatureHeader(m.secrets, webhook_id, timestamp, body);
  Json out = {{"id", webhook_id},
              {"delivery_id", FormatId(kDeliveryPrefix, m.delivery_id)},
              {"event_id", webhook_id},
              {"type", m.event_type},
              {"timestamp", FormatRfc3339(m.event_created_at)},
              {"attempt", m.attempt_count + 1},
              {"body", body},
              {"headers",
               {{"webhook-id", webhook_id},
                {"webhook-timestamp", std::to_string(timestamp)},
                {"webhook-signature", signature.value_or("")}}}};
  if (m.ordering_key) out["ordering_key"] = *m.ordering_key;
  return out;
}

// {"ids": [message ids...]} (and `retry_in` where `nack`): the event ids they name, or 422.
Result<FeedSettlement> ParseSettlement(std::string_view text, bool nack) {
  WEBHOOKD_ASSIGN_OR_RETURN(Json body, ParseJsonBody(text));
  if (!body.is_object()) return Invalid({{"body", "must be a JSON object"}});
  std::vector<FieldError> errors;
  if (nack) {
    CheckMembers(body, KnownMembers{{"ids", "retry_in"}}, "", errors);
  } else {
    CheckMembers(body, KnownMembers{{"ids"}}, "", errors);
  }
  FeedSettlement out;
  auto ids = body.find("ids");
  if (ids == body.end() || !ids->is_array() || ids->empty() || ids->size() > kMaxIds) {
    errors.push_back({"ids", "must be a list of 1 to 1000 message ids"});
  } else {
    for (const Json& id : *ids) {
      const std::optional<int64_t> event_id =
          id.is_string() ? ParseId(kEventPrefix, id.get_ref<const std::string&>()) : std::nullopt;
      if (!event_id) {
        errors.push_back({"ids", "each must be a message id (its webhook-id, evt_...)"});
        break;
      }
      out.event_ids.push_back(*event_id);
      out.ids.push_back(id.get<std::string>());
    }
  }
  if (nack) {
    Duration retry_in{0};
    DurationField(body, "retry_in", /*zero_ok=*/true, kLongestRetryIn,
                  "must be a duration from 0s to 24h, as \"30s\"", retry_in, errors);
    if (auto it = body.find("retry_in"); it != body.end() && !it->is_null()) {
      out.retry_in = retry_in;
    }
  }
  if (!errors.empty()) return Invalid(std::move(errors));
  return out;
}

}  // namespace

Result<Reply> Api::ReadFeed(const ApiRequest& req) {
  const Timestamp start = SystemClock().Now();
  // Here `wait` is checked but not waited for: ReadFeedLater waits, where there are waiters.
  WEBHOOKD_ASSIGN_OR_RETURN(FeedRead read, ParseFeedRead(stores_.destinations, req));
  WEBHOOKD_ASSIGN_OR_RETURN(FeedLease leased,
                            stores_.feeds.LeaseFeed(read.feed.id, read.limit, read.lease));
  FeedCall call = CallOf(read.feed, FeedCall::Kind::kRead);
  call.wait_ms = std::chrono::duration_cast<std::chrono::milliseconds>(read.wait).count();
  call.messages = static_cast<int64_t>(leased.messages.size());
  EmitFeedSpan(req.traceparent, req.tracestate, start, call);
  return FeedReply(leased, read.lease);
}

Result<Reply> Api::CountFeed(const ApiRequest& req) {
  WEBHOOKD_ASSIGN_OR_RETURN(Destination feed, FeedOf(stores_.destinations, req));
  WEBHOOKD_ASSIGN_OR_RETURN(
      FeedMessageCounts counts,
      stores_.feeds.CountFeed(feed.id, TransportOfUrl(feed.url) == Transport::kFeed));
  return JsonReply(200, Json{{"waiting", counts.waiting}, {"leased", counts.leased}});
}

bool Api::ReadFeedLater(ApiRequest& req, Answer answer) {
  FeedWaiters* waiters = options_.feed_waiters;
  if (waiters == nullptr) return false;
  Result<FeedRead> read = ParseFeedRead(stores_.destinations, req);
  if (!read || read->wait <= Duration{0}) return false;
  const auto now = std::chrono::steady_clock::now();
  const auto arrived = req.arrived == std::chrono::steady_clock::time_point{} ? now : req.arrived;
  const auto until = arrived + read->wait;
  // Taken before the lease: a wake-up from here on wakes this read even if it came
  // before the read began to wait.
  const uint64_t seen = waiters->Generation();
  // The span starts when the request arrived, whichever time it is handled.
  const Timestamp start = SystemClock().Now() - std::chrono::duration_cast<Duration>(now - arrived);
  FeedCall call = CallOf(read->feed, FeedCall::Kind::kRead);
  call.wait_ms = std::chrono::duration_cast<std::chrono::milliseconds>(read->wait).count();
  Result<FeedLease> leased = stores_.feeds.LeaseFeed(read->feed.id, read->limit, read->lease);
  if (!leased) {
    answer(Propagate(leased));
    return true;
  }
  if (!leased->messages.empty() || now >= until) {
    call.messages = static_cast<int64_t>(leased->messages.size());
    EmitFeedSpan(req.traceparent, req.tracestate, start, call);
    answer(FeedReply(*leased, read->lease));
    return true;
  }
  // No database connection and no thread is held from here: the waiter is a callback.
  const Duration lease = read->lease;
  auto shared = std::make_shared<Answer>(std::move(answer));
  auto ended = [this, shared, lease, call, start, traceparent = req.traceparent,
                tracestate = req.tracestate] {
    EmitFeedSpan(traceparent, tracestate, start, call);
    (*shared)(FeedReply(FeedLease{}, lease));
  };
  const bool waiting =
      waiters->Wait(read->feed.id, seen, until, [shared, ended](FeedWaiters::Woken woken) {
        if (woken == FeedWaiters::Woken::kArrived) return (*shared)(std::nullopt);
        ended();
      });
  if (!waiting) ended();  // over the cap, or stopping: what there is, nothing
  return true;
}

void Api::StopWaiting() {
  if (options_.feed_waiters != nullptr) options_.feed_waiters->Stop();
}

Reply Api::FeedReply(const FeedLease& leased, Duration lease) {
  const Timestamp now = SystemClock().Now();
  Json data = Json::array();
  for (const ClaimedDelivery& m : leased.messages) data.push_back(MessageJson(m, now));
  const Timestamp until = leased.messages.empty() ? now + lease : leased.lease_until;
  return JsonReply(200, {{"data", std::move(data)}, {"lease_until", FormatRfc3339(until)}});
}

Result<Reply> Api::AckFeed(const ApiRequest& req) {
  WEBHOOKD_ASSIGN_OR_RETURN(Destination d, FeedOf(stores_.destinations, req));
  WEBHOOKD_ASSIGN_OR_RETURN(FeedSettlement asked, ParseSettlement(req.body, /*nack=*/false));
  WEBHOOKD_ASSIGN_OR_RETURN(std::vector<FeedMessage> found,
                            stores_.feeds.FindFeedMessages(d.id, asked.event_ids));
  return SettleFeed(req, d, asked, found, /*nack=*/false);
}

Result<Reply> Api::NackFeed(const ApiRequest& req) {
  WEBHOOKD_ASSIGN_OR_RETURN(Destination d, FeedOf(stores_.destinations, req));
  WEBHOOKD_ASSIGN_OR_RETURN(FeedSettlement asked, ParseSettlement(req.body, /*nack=*/true));
  WEBHOOKD_ASSIGN_OR_RETURN(std::vector<FeedMessage> found,
                            stores_.feeds.FindFeedMessages(d.id, asked.event_ids));
  return SettleFeed(req, d, asked, found, /*nack=*/true);
}

void Api::EmitFeedSpan(const std::string& traceparent, const std::string& tracestate,
                       Timestamp start, const FeedCall& call) {
  if (options_.spans == nullptr) return;
  const SpanStart trace =
      StartSpan(traceparent, tracestate, options_.sampler, SecureRandomBytes(24));
  if (trace.sampled) options_.spans->Emit(FeedSpan(trace, start, SystemClock().Now(), call));
}

Result<Reply> Api::SettleFeed(const ApiRequest& req, const Destination& d,
                              const FeedSettlement& asked, const std::vector<FeedMessage>& found,
                              bool nack) {
  const int64_t feed = d.id;
  const RetryPolicy policy(options_.retry_schedule, options_.retry_jitter);
  SystemRandom random;
  const Timestamp now = SystemClock().Now();
  const Timestamp start = now;
  std::vector<AttemptRecord> records;
  for (const FeedMessage& m : found) {
    if (!m.leased) continue;
    AttemptRecord r;
    r.delivery_id = m.delivery_id;
    r.claim_token = m.lease_token;
    r.destination_id = feed;
    r.event_id = m.event_id;
    r.attempt_number = m.attempt_count + 1;
    r.started_at = now;
    r.delivery_created_at = m.created_at;
    r.clean = true;
    if (!nack) {
      r.outcome = Outcome::kSuccess;
      r.next_status = DeliveryStatus::kSucceeded;
    } else {
      r.outcome = Outcome::kRetryable;
      r.error = "nacked";
      const Decision next =
          policy.Next(m.cycle_attempts + 1,
                      AttemptResult{Outcome::kRetryable, std::nullopt, std::nullopt}, random);
      if (next.kind == Decision::Kind::kDeadLetter) {
        r.next_status = DeliveryStatus::kDeadLettered;
        r.dead_letter_reason = next.reason;
        // Where the destination falls back to its feed, the message waits there instead.
        r.wait = asked.retry_in.value_or(Duration{0});
      } else {
        r.next_status = DeliveryStatus::kPending;
        r.wait = asked.retry_in.value_or(next.wait);
      }
    }
    records.push_back(std::move(r));
  }
  WEBHOOKD_ASSIGN_OR_RETURN(RecordedOutcomes recorded, stores_.feeds.RecordFeedOutcomes(records));
  const std::set<int64_t> applied(recorded.applied.begin(), recorded.applied.end());
  // Expired: queued but not under a running lease now (its lease ended, or it was never
  // leased). A message no longer queued is finished (acked before, or dead-lettered): it
  // is neither, so a second ack of the same message changes and reports nothing.
  std::set<int64_t> settled, queued;
  for (const FeedMessage& m : found) {
    queued.insert(m.event_id);
    if (applied.contains(m.delivery_id)) settled.insert(m.event_id);
  }
  Json expired = Json::array();
  std::set<int64_t> listed;
  for (size_t i = 0; i < asked.event_ids.size(); ++i) {
    const int64_t e = asked.event_ids[i];
    if (queued.contains(e) && !settled.contains(e) && listed.insert(e).second) {
      expired.push_back(asked.ids[i]);
    }
  }
  if (!nack && metrics_ != nullptr) metrics_->feed_acks.Inc(settled.size());
  FeedCall call = CallOf(d, nack ? FeedCall::Kind::kNack : FeedCall::Kind::kAck);
  call.messages = static_cast<int64_t>(settled.size());
  call.expired = static_cast<int64_t>(expired.size());
  EmitFeedSpan(req.traceparent, req.tracestate, start, call);
  Log(LogLevel::kInfo, nack ? "nacked feed messages" : "acked feed messages",
      {{"destination_id", FormatId(kDestinationPrefix, feed)},
       {"count", static_cast<int64_t>(settled.size())}});
  return JsonReply(200, {{nack ? "nacked" : "acked", static_cast<int64_t>(settled.size())},
                         {"expired", std::move(expired)}});
}

}  // namespace webhookd
