// The inbound source routes: /v1/sources, its secret, and the ingest address /in/{id}.
#include <array>
#include <string>

#include "base/random.h"
#include "core/ids.h"
#include "core/inbound_verify.h"
#include "server/api.h"
#include "server/api_request.h"
#include "server/source_cache.h"
#include "server/source_codec.h"

namespace webhookd {

using namespace api;

namespace {

std::unexpected<Error> NoSources() { return Fail(ErrorKind::kNotFound, "no source with that id"); }

// One answer for every request that does not verify, whatever the cause, so that a
// forger learns nothing from it.
Reply Unverified() {
  return ProblemReply(401, "the request does not carry a valid signature of this source");
}

// The request as a span (docs/tracing.md): a server span whose children are the attempts of
// the event it made.
trace::Span InboundSpan(const SpanStart& t, Timestamp start, Timestamp end, const Source& source,
                        std::string_view outcome, int status, std::optional<int64_t> event_id) {
  trace::Span span;
  span.trace_id = t.trace_id;
  span.span_id = t.span_id;
  span.parent_span_id = t.parent;
  span.tracestate = t.tracestate;
  span.flags = t.flags;
  span.name = "webhookd inbound";
  span.kind = trace::SpanKind::kServer;
  span.start = start;
  span.end = end;
  auto& a = span.attributes;
  a.push_back({"http.request.method", std::string("POST")});
  a.push_back({"url.path", "/in/" + FormatId(kSourcePrefix, source.id)});
  a.push_back({"http.response.status_code", int64_t{status}});
  a.push_back({"webhookd.source.id", FormatId(kSourcePrefix, source.id)});
  a.push_back(
      {"webhookd.source.provider", std::string(InboundProviderName(source.settings.provider))});
  a.push_back({"webhookd.inbound.outcome", std::string(outcome)});
  if (event_id) a.push_back({"webhookd.event.id", FormatId(kEventPrefix, *event_id)});
  if (source.tenant_id) a.push_back({"webhookd.tenant.id", *source.tenant_id});
  return span;
}

std::string_view OutcomeName(Metrics::InboundOutcome outcome) {
  switch (outcome) {
    case Metrics::InboundOutcome::kAccepted:
      return "accepted";
    case Metrics::InboundOutcome::kDuplicate:
      return "duplicate";
    case Metrics::InboundOutcome::kUnverified:
      return "unverified";
    case Metrics::InboundOutcome::kMalformed:
      return "malformed";
    case Metrics::InboundOutcome::kLimited:
      return "limited";
  }
  return "unknown";
}

}  // namespace

Result<Reply> Api::CreateSource(const ApiRequest& req) {
  if (stores_.sources == nullptr) return NoSources();
  WEBHOOKD_ASSIGN_OR_RETURN(Json body, ParseJsonBody(req.body));
  WEBHOOKD_ASSIGN_OR_RETURN(SourceFields fields, ParseSourceFields(body, /*creating=*/true));
  Source source;
  source.settings.provider = *fields.provider;
  if (auto problem = SourceSecretError(*fields.provider, *fields.secret)) {
    return Invalid({{"secret", *problem}});
  }
  source.secret = *fields.secret;
  WEBHOOKD_RETURN_IF_ERROR(ApplySourceFields(fields, source));
  // A tenant key makes its own tenant's sources, whatever the body says.
  source.tenant_id = req.scope.tenant_id ? req.scope.tenant_id : fields.tenant_id;
  WEBHOOKD_ASSIGN_OR_RETURN(Source created, stores_.sources->CreateSource(source));
  if (source_cache_) source_cache_->Invalidate();
  return JsonReply(201, SourceJson(created, options_.public_url));
}

Result<Reply> Api::GetSource(const ApiRequest& req) {
  if (stores_.sources == nullptr) return NoSources();
  WEBHOOKD_ASSIGN_OR_RETURN(int64_t id, PathId(req, kSourcePrefix, "source"));
  WEBHOOKD_ASSIGN_OR_RETURN(Source source, stores_.sources->GetSource(id, req.scope));
  return JsonReply(200, SourceJson(source, options_.public_url));
}

Result<Reply> Api::ListSources(const ApiRequest& req) {
  if (stores_.sources == nullptr) return NoSources();
  WEBHOOKD_ASSIGN_OR_RETURN(Page page, ParsePage(req, kSourcePrefix));
  WEBHOOKD_ASSIGN_OR_RETURN(auto tenant, QueryTenant(req));
  WEBHOOKD_ASSIGN_OR_RETURN(auto listing,
                            stores_.sources->ListSources(SourceFilter{tenant}, page, req.scope));
  return ListReply(listing, kSourcePrefix,
                   [&](const Source& s) { return SourceJson(s, options_.public_url); });
}

Result<Reply> Api::UpdateSource(const ApiRequest& req) {
  if (stores_.sources == nullptr) return NoSources();
  WEBHOOKD_ASSIGN_OR_RETURN(int64_t id, PathId(req, kSourcePrefix, "source"));
  WEBHOOKD_ASSIGN_OR_RETURN(Json body, ParseJsonBody(req.body));
  WEBHOOKD_ASSIGN_OR_RETURN(SourceFields fields, ParseSourceFields(body, /*creating=*/false));
  WEBHOOKD_ASSIGN_OR_RETURN(
      Source updated,
      stores_.sources->UpdateSource(
          id, [&fields](Source& stored) { return ApplySourceFields(fields, stored); }, req.scope));
  if (source_cache_) source_cache_->Invalidate();
  return JsonReply(200, SourceJson(updated, options_.public_url));
}

Result<Reply> Api::RotateSourceSecret(const ApiRequest& req) {
  if (stores_.sources == nullptr) return NoSources();
  WEBHOOKD_ASSIGN_OR_RETURN(int64_t id, PathId(req, kSourcePrefix, "source"));
  // The provider decides what a secret may be: read it (404 outside the scope) first.
  WEBHOOKD_ASSIGN_OR_RETURN(Source source, stores_.sources->GetSource(id, req.scope));
  WEBHOOKD_ASSIGN_OR_RETURN(
      SourceRotation rotation,
      ParseSourceRotation(req.body, source.settings.provider, options_.secret_grace));
  WEBHOOKD_ASSIGN_OR_RETURN(Timestamp until, stores_.sources->RotateSourceSecret(
                                                 id, rotation.secret, rotation.grace, req.scope));
  if (source_cache_) source_cache_->Invalidate();
  return JsonReply(
      200, {{"secret", kHiddenHeaderValue}, {"previous_valid_until", FormatRfc3339(until)}});
}

Result<Reply> Api::DeleteSource(const ApiRequest& req) {
  if (stores_.sources == nullptr) return NoSources();
  WEBHOOKD_ASSIGN_OR_RETURN(int64_t id, PathId(req, kSourcePrefix, "source"));
  WEBHOOKD_RETURN_IF_ERROR(stores_.sources->DeleteSource(id, req.scope));
  if (source_cache_) source_cache_->Invalidate();
  return Reply{204, "", "", {}};
}

Result<Reply> Api::ReceiveInbound(const ApiRequest& req) {
  if (!source_cache_) return NoSources();
  WEBHOOKD_ASSIGN_OR_RETURN(int64_t id, PathId(req, kSourcePrefix, "source"));
  using Outcome = Metrics::InboundOutcome;
  // Twice at most: once more when the store found the copy verified against stale.
  for (int round = 0; round < 2; ++round) {
    WEBHOOKD_ASSIGN_OR_RETURN(auto snapshot, source_cache_->Current());
    auto it = snapshot->sources.find(id);
    if (it == snapshot->sources.end()) return NoSources();
    const Source& source = it->second;
    const auto provider = static_cast<size_t>(source.settings.provider);
    const Timestamp now = SystemClock().Now();
    // Providers send no traceparent: the request starts a trace, its event's attempts
    // continue it.
    const SpanStart trace =
        StartSpan(req.traceparent, req.tracestate, options_.sampler, SecureRandomBytes(24));
    // Every answer is counted, kept for the console, and (sampled) a span.
    const auto count = [&](Outcome outcome, int status,
                           std::optional<int64_t> event_id = std::nullopt) {
      if (metrics_ != nullptr) metrics_->CountInbound(provider, outcome);
      inbound_log_.Record({source.id, now, outcome, status, event_id});
      if (options_.spans != nullptr && trace.sampled) {
        options_.spans->Emit(InboundSpan(trace, now, SystemClock().Now(), source,
                                         OutcomeName(outcome), status, event_id));
      }
    };
    std::vector<std::string> secrets{source.secret};
    if (source.previous_secret && source.previous_valid_until &&
        *source.previous_valid_until > now) {
      secrets.push_back(*source.previous_secret);
    }
    VerifyResult verified =
        Verify(source.settings, secrets, req.headers, req.raw_query, req.body, now);
    if (!verified) {
      if (verified.error() == InboundFailure::kUnverified) {
        count(Outcome::kUnverified, 401);
        return Unverified();
      }
      count(Outcome::kMalformed, 400);
      return Fail(ErrorKind::kMalformed,
                  "the request is not what " +
                      std::string(InboundProviderName(source.settings.provider)) + " sends");
    }
    if (verified->challenge) {
      return JsonReply(200, {{"challenge", *verified->challenge}});
    }
    if (const int wait = source_cache_->Take(id); wait > 0) {
      count(Outcome::kLimited, 429);
      Reply reply = ProblemReply(429,
                                 "this source takes at most WEBHOOKD_SOURCE_RATE requests a "
                                 "second; retry later");
      reply.headers.clear();
      reply.headers.emplace_back("Retry-After", std::to_string(wait));
      return reply;
    }
    InboundEvent event;
    event.source_id = id;
    event.provider = source.settings.provider;
    event.tenant_id = source.tenant_id;
    event.type = std::move(verified->event_type);
    event.payload = std::move(verified->payload);
    event.dedupe_key = std::move(verified->dedupe_key);
    event.generation = snapshot->generation;
    event.traceparent = trace.traceparent();
    auto receipt = stores_.sources->InsertInboundEvent(event);
    if (!receipt && receipt.error().kind == ErrorKind::kStale) {
      source_cache_->Invalidate();
      continue;
    }
    if (!receipt) return Propagate(receipt);
    count(receipt->duplicate ? Outcome::kDuplicate : Outcome::kAccepted, 200, receipt->event_id);
    if (!receipt->duplicate && metrics_ != nullptr) metrics_->events_ingested.Inc();
    return JsonReply(200, {{"event_id", FormatId(kEventPrefix, receipt->event_id)}});
  }
  return Fail(ErrorKind::kUnavailable, "the source is changing; retry");
}

Result<Reply> Api::ListSourceRequests(const ApiRequest& req) {
  if (stores_.sources == nullptr) return NoSources();
  WEBHOOKD_ASSIGN_OR_RETURN(int64_t id, PathId(req, kSourcePrefix, "source"));
  // Read first: a source outside the key's scope is as unknown as a made-up id.
  WEBHOOKD_ASSIGN_OR_RETURN(Source source, stores_.sources->GetSource(id, req.scope));
  Json data = Json::array();
  for (const InboundRequestLog::Entry& e : inbound_log_.Latest(source.id, 50)) {
    Json row = {{"received_at", FormatRfc3339(e.at)},
                {"outcome", OutcomeName(e.outcome)},
                {"status", e.status}};
    if (e.event_id) row["event_id"] = FormatId(kEventPrefix, *e.event_id);
    data.push_back(std::move(row));
  }
  return JsonReply(200, {{"data", std::move(data)}});
}

}  // namespace webhookd
