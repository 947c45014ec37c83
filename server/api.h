#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/clock.h"
#include "base/metrics.h"
#include "core/header_lookup.h"
#include "core/trace_context.h"
#include "net/lookup_shares.h"
#include "net/resolver.h"
#include "server/event_catalog.h"
#include "server/inbound_request_log.h"
#include "server/problem.h"
#include "store/catalog_store.h"
#include "store/dead_letter_store.h"
#include "store/delivery_reads.h"
#include "store/destination_store.h"
#include "store/erasure_store.h"
#include "store/event_store.h"
#include "store/feed_store.h"
#include "store/key_store.h"
#include "store/operations_store.h"
#include "store/recovery_store.h"
#include "store/source_store.h"
#include "store/tenant_store.h"
#include "trace/span.h"

namespace webhookd {

class FeedWaiters;
class SourceCache;

// What a route needs of a request, free of the HTTP library.
struct ApiRequest {
  // The scope is the one field with no default (see Scope): authentication sets it.
  explicit ApiRequest(Scope scope) : scope(std::move(scope)) {}

  std::vector<std::string> path_args;  // the {} parts of the route, in order
  std::multimap<std::string, std::string> query;
  std::string body;
  std::optional<std::string> idempotency_key;
  // W3C trace context headers, as received (empty: none).
  std::string traceparent;
  std::string tracestate;
  // Set when authentication was deferred to the store (see Authenticator::CheckOrDefer).
  std::optional<std::string> unverified_key_hash;
  // What the caller's key may see (see Authenticator); every store call gets it.
  Scope scope;
  // The request's headers and its query as sent (without "?"): filled for the inbound
  // address alone, whose verification reads them as received.
  HeaderLookup headers;
  std::string raw_query;
  // When the request arrived (a feed read's wait counts from it); unset: when handled.
  std::chrono::steady_clock::time_point arrived;
};

// The stores the REST API reads and writes, each borrowed.
struct ApiStores {
  DestinationStore& destinations;
  EventStore& events;
  DeliveryReads& deliveries;
  DeadLetterStore& dead_letters;
  OperationsStore& operations;
  KeyStore& keys;  // portal links make keys
  TenantStore& tenants;
  CatalogStore& catalog;
  ErasureStore& erasures;
  FeedStore& feeds;
  SourceStore* sources = nullptr;       // null: no inbound sources (their routes answer 404)
  RecoveryStore* recoveries = nullptr;  // null: no recoveries (their routes answer 404)
};

// The settings the API reads (from the environment's Config, in serve.cc).
struct ApiOptions {
  bool allow_private_destinations = false;         // WEBHOOKD_ALLOW_PRIVATE_DESTINATIONS
  int destination_max_in_flight = 16;              // WEBHOOKD_DESTINATION_MAX_IN_FLIGHT
  Duration secret_grace = std::chrono::hours(24);  // WEBHOOKD_SECRET_GRACE
  std::string public_url;                          // WEBHOOKD_PUBLIC_URL: portal links
  int max_destinations_per_tenant = 1000;          // WEBHOOKD_MAX_DESTINATIONS_PER_TENANT
  bool strict_event_types = false;                 // WEBHOOKD_EVENT_TYPES=strict
  // Name lookups (for destination URL checks) one tenant may have in progress at once,
  // of the resolver's 64: no tenant can take them all.
  int lookups_per_tenant = 8;
  // Where ingest spans go (null: nowhere) and which are sampled (docs/tracing.md).
  trace::SpanSink* spans = nullptr;
  Sampler sampler;
  // Called once an erasure is recorded, to start carrying it out now (serve.cc wakes the
  // Purger); empty: it waits for the next round.
  std::function<void()> erasure_requested;
  // Called once a recovery is recorded, to start its first page now (serve.cc wakes the
  // Recoverer); empty: it waits for the next round.
  std::function<void()> recovery_requested;
  int source_rate = 1000;  // WEBHOOKD_SOURCE_RATE
  // WEBHOOKD_RETRY_SCHEDULE and its jitter: a feed's nack follows it (docs/feeds.md).
  std::vector<Duration> retry_schedule = {std::chrono::seconds(30), std::chrono::minutes(2),
                                          std::chrono::minutes(10), std::chrono::hours(1)};
  double retry_jitter = 0.2;
  // Where feed reads with a `wait` wait (borrowed; null: a read answers at once).
  FeedWaiters* feed_waiters = nullptr;
};

// What an ack or a nack of a feed's messages asks (server/feeds_api.cc).
struct FeedCall;

struct FeedSettlement {
  std::vector<int64_t> event_ids;  // the messages' ids are their events'
  std::vector<std::string> ids;    // as given, for the answer
  std::optional<Duration> retry_in;
};

// The REST API, one method per route: parse (server/json_codec.h), make one store call,
// map the result. Authentication and routing happen before (see HttpServer). The
// handlers live by resource: destinations_api.cc, events_api.cc (events, deliveries,
// attempts), dead_letters_api.cc, admin_api.cc (stats, tenants, portal links),
// event_types_api.cc (the event catalog and the filter test), sources_api.cc (inbound
// sources and their ingest address), recoveries_api.cc (a destination's recoveries).
class Api {
 public:
  // Borrows `stores`' members, `resolver` and `metrics` (which may be null); each must
  // outlive the Api.
  Api(ApiStores stores, Resolver& resolver, ApiOptions options, Metrics* metrics = nullptr);
  ~Api();

  Result<Reply> CreateDestination(const ApiRequest& req);
  Result<Reply> GetDestination(const ApiRequest& req);
  Result<Reply> ListDestinations(const ApiRequest& req);
  Result<Reply> GetDestinationSecret(const ApiRequest& req);
  Result<Reply> RotateDestinationSecret(const ApiRequest& req);
  Result<Reply> UpdateDestination(const ApiRequest& req);
  Result<Reply> DeleteDestination(const ApiRequest& req);
  // GET /v1/destinations/{id}/stats (server/destination_stats_api.cc).
  Result<Reply> GetDestinationStats(const ApiRequest& req);

  Result<Reply> CreateEvent(const ApiRequest& req);
  // CreateEvent for a caller that must not wait (the listener's begin threads): true when
  // it took `req` (moved from) and will call `answer` exactly once, perhaps later and from
  // a store thread; false when the request needs CreateEvent (an idempotency key, a
  // target destination, a catalog not cached, anything to refuse). `answer(nullopt)` hands the
  // request back for CreateEvent after all: the store found the catalog changed since the check,
  // and nothing was written. `answer` must not block.
  using Answer = std::function<void(std::optional<Result<Reply>>)>;
  bool CreateEventLater(ApiRequest& req, Answer answer);
  Result<Reply> GetEvent(const ApiRequest& req);
  Result<Reply> ListEvents(const ApiRequest& req);

  Result<Reply> GetDelivery(const ApiRequest& req);
  Result<Reply> ListDeliveries(const ApiRequest& req);
  Result<Reply> ListAttempts(const ApiRequest& req);

  Result<Reply> ListDeadLetters(const ApiRequest& req);
  Result<Reply> ReplayDeadLetter(const ApiRequest& req);
  Result<Reply> DismissDeadLetter(const ApiRequest& req);
  Result<Reply> ReplayDeadLetters(const ApiRequest& req);
  Result<Reply> RecoverDestination(const ApiRequest& req);
  Result<Reply> GetRecovery(const ApiRequest& req);
  Result<Reply> GetStats(const ApiRequest& req);
  Result<Reply> GetStatsSeries(const ApiRequest& req);
  Result<Reply> GetFailingDestinations(const ApiRequest& req);

  Result<Reply> ListEventTypes(const ApiRequest& req);
  Result<Reply> GetEventType(const ApiRequest& req);
  Result<Reply> CreateEventType(const ApiRequest& req);
  Result<Reply> UpdateEventType(const ApiRequest& req);
  Result<Reply> DeleteEventType(const ApiRequest& req);
  Result<Reply> TestFilter(const ApiRequest& req);

  Result<Reply> EraseSubject(const ApiRequest& req);
  Result<Reply> GetErasure(const ApiRequest& req);

  Result<Reply> CreateSource(const ApiRequest& req);
  Result<Reply> GetSource(const ApiRequest& req);
  Result<Reply> ListSources(const ApiRequest& req);
  Result<Reply> UpdateSource(const ApiRequest& req);
  Result<Reply> RotateSourceSecret(const ApiRequest& req);
  Result<Reply> DeleteSource(const ApiRequest& req);
  // POST /in/{id}: no API key; the provider's signature is the credential.
  Result<Reply> ReceiveInbound(const ApiRequest& req);
  // GET /v1/sources/{id}/requests: the latest requests to its address this process answered.
  Result<Reply> ListSourceRequests(const ApiRequest& req);
  Result<Reply> ReadFeed(const ApiRequest& req);
  // ReadFeed with a `wait`, for a caller that must not wait (HttpHandler::HandleLater):
  // true when it took `req` and will call `answer` exactly once, from any thread: at once
  // when there are messages, else when one may have arrived (`answer(nullopt)`: call again
  // to lease it, the wait still counted from `req.arrived`), or with an empty list when
  // the wait ends, at StopWaiting, or past the waiters' cap. False: ReadFeed answers (no
  // wait, no waiters, or something to refuse).
  bool ReadFeedLater(ApiRequest& req, Answer answer);
  // Answers every feed read that waits (shutdown).
  void StopWaiting();
  Result<Reply> AckFeed(const ApiRequest& req);
  // GET /v1/destinations/{id}/messages/counts: the feed's waiting and leased messages.
  Result<Reply> CountFeed(const ApiRequest& req);
  Result<Reply> NackFeed(const ApiRequest& req);

  Result<Reply> ListTenants(const ApiRequest& req);
  Result<Reply> CreatePortalLink(const ApiRequest& req);

 private:
  // kInvalid on `field` when the URL's host is or resolves to a non-public address;
  // kUnavailable (503) when `tenant` ("" for none) holds its share of name lookups or
  // the resolver has no slot free. With private destinations allowed nothing is refused
  // for its address, but a name that does not resolve now comes back as a warning for
  // the answer: the destination is kept (its DNS may come later), and its owner learns
  // at once why deliveries would fail.
  Result<std::vector<FieldError>> CheckDestinationUrl(const std::string& url,
                                                      const std::string& tenant,
                                                      const std::string& field = "url");
  // One host of it: a warning for the answer, or the refusal above.
  Result<std::optional<FieldError>> CheckHost(const std::string& host, const std::string& tenant,
                                              const std::string& field);
  // An ack or a nack of `found`, the messages of feed `feed` that `asked` names, recorded
  // as their attempts.
  // A feed read's answer: its messages, leased until `lease_until`.
  static Reply FeedReply(const FeedLease& leased, Duration lease);
  Result<Reply> SettleFeed(const ApiRequest& req, const Destination& feed,
                           const FeedSettlement& asked, const std::vector<FeedMessage>& found,
                           bool nack);
  // A feed call's span (server/feed_trace.h), in the caller's trace when it sent one.
  void EmitFeedSpan(const std::string& traceparent, const std::string& tracestate, Timestamp start,
                    const FeedCall& call);
  // CreateEvent's 202 for a stored event, with its metrics and span.
  Reply Accepted(const IngestReceipt& receipt, const SpanStart& trace, Timestamp received);

  ApiStores stores_;
  Resolver& resolver_;
  ApiOptions options_;
  Metrics* metrics_;
  EventCatalog catalog_;                       // ingest's schema checks
  std::unique_ptr<SourceCache> source_cache_;  // null without a SourceStore
  InboundRequestLog inbound_log_;              // what ReceiveInbound answered, latest first
  LookupShares lookups_;
};

}  // namespace webhookd
