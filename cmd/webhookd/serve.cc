// The composition root: the one place that knows PostgreSQL is the store in use and
// builds the real clock, random source, resolver, sender and stores.
//
// Threads of `webhookd all` (docs/architecture.md has the whole model): this thread
// runs the dispatcher's claim loop (worker, all) or waits for the HTTP thread; the HTTP
// listener's two socket threads accept, read and write (and answer /healthz and static
// files), its two begin threads parse and validate an ingest whose body came with its
// head, and its 128 handler threads run every other request (a worker's operations port:
// one, one and 4); one thread waits for SIGTERM/SIGINT (blocked in every other thread)
// and stops things in order; one thread stores the bootstrap admin key while the
// database is not up yet; one thread purges what retention no longer keeps and carries
// out subjects' erasures (server, all); one thread carries out destinations' recoveries,
// a page of dead letters at a time (server, all); two threads hold the feed reads that
// wait (server, all: one listens for wake-ups on a connection of its own, one answers the
// waiting reads, which hold no other thread and no other connection:
// server/feed_waiters.h). Name lookups run on short-lived threads: curl's for deliveries,
// SystemResolver's (at most 64, 8 per tenant, 3 s each) for destination URLs, and
// another's (64, 8 per tenant, the attempt timeout each) for broker hosts. Each broker
// transport has a closer thread that joins the connections it closes.
//
// Descriptors: the soft open-file limit is raised to the hard one at start, and the
// listener holds at most that many connections less a reserve for the database pools,
// deliveries, name lookups and the process's own files (ConnectionBudget), so a flood of
// connections cannot starve the database or the deliveries of descriptors.
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "base/log.h"
#include "base/metrics.h"
#include "base/open_files.h"
#include "base/random.h"
#include "cmd/webhookd/cli.h"
#include "cmd/webhookd/commands.h"
#include "cmd/webhookd/tracing.h"
#include "core/api_key.h"
#include "core/ids.h"
#include "core/retry_policy.h"
#include "net/client_certificate.h"
#include "net/resolver.h"
#include "server/api.h"
#include "server/auth.h"
#include "server/feed_waiters.h"
#include "server/http_server.h"
#include "store/pg/migrator.h"
#include "store/pg/pg_store.h"
#include "trace/exporter_options.h"
#include "worker/amqp_transport.h"
#include "worker/curl_sender.h"
#include "worker/dispatcher.h"
#include "worker/kafka_transport.h"
#include "worker/nats_transport.h"
#include "worker/purger.h"
#include "worker/recoverer.h"
#include "worker/redis_transport.h"
#include "worker/transport_router.h"

namespace webhookd::cmd {
namespace {

constexpr const char* kServeUsage = R"(Usage: webhookd server | worker | all

server  the REST API on WEBHOOKD_ADDR (default 127.0.0.1:8080), with /healthz, /readyz
        and /metrics
worker  delivers webhooks; serves /healthz, /readyz, /metrics on WEBHOOKD_WORKER_ADDR
        (default 127.0.0.1:9090; port 0 picks a free port; empty turns it off)
all     both in one process, everything on WEBHOOKD_ADDR

SIGTERM or SIGINT stops cleanly: the listener closes, deliveries in progress finish and
are recorded, unstarted ones are handed back, then the process exits 0.
)";

// The usage, then every variable read, from the tables that read them, so the list
// cannot fall behind them.
std::string ServeHelp() {
  std::string help = kServeUsage;
  std::string line = "Environment (docs/configuration.md, docs/tracing.md):";
  const auto add = [&](std::string_view name) {
    if (line.size() + name.size() + 2 > 88) {
      help += line + "\n";
      line.clear();
    } else {
      line += ' ';
    }
    line += name;
  };
  for (const ConfigVariable& v : ConfigVariables()) add(v.name);
  for (const ConfigVariable& v : trace::TraceVariables()) add(v.name);
  return help + line + "\n";
}

// Blocks SIGTERM and SIGINT in every thread made after this, so one thread can wait for
// them with sigwait and stop things in order.
sigset_t BlockStopSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  return set;
}

// The gauges read from PostgreSQL, cached so a scrape every second costs the database
// one small query every few seconds.
class CachedGauges {
 public:
  explicit CachedGauges(OperationsStore& store) : store_(store) {}
  Metrics::Gauges Get() {
    std::lock_guard lock(mu_);
    const auto now = std::chrono::steady_clock::now();
    if (now - fetched_ >= std::chrono::seconds(5)) {
      if (auto g = store_.CountDeliveries()) {
        gauges_ = {g->pending, g->retrying_over_24h, g->in_flight, g->circuits_open, {}, {}};
        fetched_ = now;
        if (auto certificates = store_.ClientCertificates()) {
          for (const auto& [id, pem] : *certificates) {
            if (auto expiry = CertificateExpiry(pem)) {
              gauges_.certificate_expiries.emplace_back(
                  FormatId(kDestinationPrefix, id),
                  std::chrono::duration_cast<std::chrono::seconds>(expiry->time_since_epoch())
                      .count());
            }
          }
        }
        if (auto feeds = store_.CountFeedMessages()) {
          for (const FeedMessageCounts& f : *feeds) {
            gauges_.feed_messages.emplace_back(FormatId(kDestinationPrefix, f.destination_id),
                                               f.waiting, f.leased);
          }
        }
      }
    }
    return gauges_;
  }

 private:
  OperationsStore& store_;
  std::mutex mu_;
  Metrics::Gauges gauges_;
  std::chrono::steady_clock::time_point fetched_{};
};

// Start-up with a bootstrap key that was revoked or has expired: one line naming the
// variable, exit 1. Coming back with a restart, it would outlive what ended it.
int RefuseBootstrapKey(KeyStore::Bootstrap state) {
  std::fputs(state == KeyStore::Bootstrap::kExpired
                 ? "webhookd: WEBHOOKD_BOOTSTRAP_ADMIN_KEY: this key has expired and stays "
                   "expired; set a new value or unset the variable\n"
                 : "webhookd: WEBHOOKD_BOOTSTRAP_ADMIN_KEY: this key was revoked and stays "
                   "revoked; set a new value or unset the variable\n",
             stderr);
  return 1;
}

}  // namespace

namespace {

// What OpenStore gives each use: the database connections webhookd holds.
pg::PgStore::Options StoreOptions(StoreUse use) {
  pg::PgStore::Options options;
  switch (use) {
    case StoreUse::kServer:  // `all` too: the API's handlers borrow one per store call
      options.api_connections = 16;
      break;
    case StoreUse::kWorker:  // readiness and the gauges
      options.api_connections = 4;
      break;
    case StoreUse::kCommand:
      options.api_connections = 1;
      options.committers = 0;
      break;
  }
  // The claim loop, and one for each outcome recorder.
  options.worker_connections = use == StoreUse::kCommand ? 0 : Dispatcher::Options{}.recorders + 1;
  return options;
}

// The descriptors the listener must leave free: the database's connections, two for each
// delivery in flight (its socket, and a resolver's or a reused connection's), the name
// lookups of destination URLs, and a margin for logs, epoll, pipes and OTLP export.
int64_t DescriptorReserve(const Config& config, StoreUse use, bool worker) {
  const pg::PgStore::Options store = StoreOptions(use);
  constexpr int64_t kLookups = 64;
  constexpr int64_t kMargin = 128;
  return store.api_connections + store.committers + store.worker_connections +
         (worker ? 2 * int64_t{config.worker_concurrency} : 0) + kLookups + kMargin;
}

}  // namespace

std::unique_ptr<Store> OpenStore(const Config& config, StoreUse use) {
  pg::PgStore::Options options = StoreOptions(use);
  if (use == StoreUse::kServer) {
    options.api_statement_timeout =
        std::chrono::duration_cast<std::chrono::milliseconds>(config.statement_timeout);
  }
  options.secrets = SecretBox(config.encryption_key, config.encryption_key_previous);
  return std::make_unique<pg::PgStore>(config.database_url, options);
}

Result<pg::Migrated> ApplyMigrations(const std::string& database_url) {
  return pg::Migrate(database_url, pg::EmbeddedMigrations());
}

namespace {

// The REST API of `server` and `all`: its handlers and the key check.
struct ApiPart {
  // Declared first, so destroyed last: the Api borrows it.
  std::unique_ptr<FeedWaiters> feed_waiters;
  std::unique_ptr<Api> rest;
  std::unique_ptr<Authenticator> auth;
};

ApiPart MakeApi(Store& store, Resolver& resolver, const Config& config, Tracing& tracing,
                Metrics& metrics, Purger* purger, Recoverer* recoverer) {
  // webhookd.publish() reads WEBHOOKD_EVENT_TYPES from the database (docs/catalog.md).
  auto mode = store.SetEventTypesMode(config.strict_event_types ? EventTypesMode::kStrict
                                                                : EventTypesMode::kOpen);
  if (!mode) {
    Log(LogLevel::kWarn, "could not record WEBHOOKD_EVENT_TYPES for webhookd.publish()",
        {{"error", mode.error().message}});
  }
  ApiOptions options;
  options.allow_private_destinations = config.allow_private_destinations;
  options.destination_max_in_flight = config.destination_max_in_flight;
  options.secret_grace = config.secret_grace;
  options.public_url = config.public_url;
  options.max_destinations_per_tenant = config.max_destinations_per_tenant;
  options.strict_event_types = config.strict_event_types;
  options.retry_schedule = config.retry_schedule;
  options.retry_jitter = config.retry_jitter;
  options.spans = tracing.sink();
  options.sampler = tracing.sampler();
  options.source_rate = config.source_rate;
  if (purger != nullptr) options.erasure_requested = [purger] { purger->Wake(); };
  if (recoverer != nullptr) options.recovery_requested = [recoverer] { recoverer->Wake(); };
  ApiPart part;
  // Feed reads that wait are woken by the channel that wakes the workers' claim, on a
  // listener of the API's own (a `server` has no dispatcher to share one with).
  part.feed_waiters = std::make_unique<FeedWaiters>(
      [&store] { return store.Listen(); },
      [&store](std::span<const int64_t> feeds) { return store.ReadyFeeds(feeds); });
  part.feed_waiters->Start();
  options.feed_waiters = part.feed_waiters.get();
  part.rest = std::make_unique<Api>(ApiStores{store, store, store, store, store, store, store,
                                              store, store, store, &store, &store},
                                    resolver, options, &metrics);
  part.auth = std::make_unique<Authenticator>(store);
  return part;
}

// The listener: the API and the operations routes on WEBHOOKD_ADDR (`server`, `all`), or
// a worker's operations routes alone on WEBHOOKD_WORKER_ADDR (none when turned off).
struct Listener {
  std::unique_ptr<HttpServer> http;
  std::string addr;  // host:port as bound, [v6]:port for IPv6
  int port = 0;
};

// Bound here, so that a port in use stops start-up.
Result<Listener> MakeListener(Store& store, ApiPart& api, const Config& config, Mode mode,
                              int64_t open_files, Metrics& metrics, CachedGauges& gauges) {
  const bool serves_api = mode != Mode::kWorker;
  const std::optional<ListenAddress> listen =
      serves_api ? std::optional(config.addr) : config.worker_addr;
  if (!listen) return Listener{};
  HttpServer::Options options{*listen, config.max_payload_bytes, serves_api ? 128 : 4};
  options.serve_ui = config.serve_ui;
  const StoreUse use = serves_api ? StoreUse::kServer : StoreUse::kWorker;
  options.max_connections =
      ConnectionBudget(open_files, DescriptorReserve(config, use, mode != Mode::kServer), 10000);
  options.max_connections_per_client = config.max_connections_per_client;
  Log(LogLevel::kInfo, "connection limits",
      {{"open_files", open_files},
       {"max_connections", options.max_connections},
       {"max_connections_per_client", options.max_connections_per_client}});
  Listener listener;
  listener.http = std::make_unique<HttpServer>(
      store, api.rest.get(), api.auth.get(), options,
      [&metrics](std::string_view route, int status) { metrics.CountRequest(route, status); },
      [&metrics, &gauges] { return metrics.Render(gauges.Get()); });
  auto bound = listener.http->Bind();
  if (!bound) {
    return Fail(ErrorKind::kUnavailable,
                std::string(serves_api ? "WEBHOOKD_ADDR" : "WEBHOOKD_WORKER_ADDR") + ": " +
                    bound.error().message);
  }
  listener.port = *bound;
  const bool v6 = listen->host.find(':') != std::string::npos;
  listener.addr =
      (v6 ? "[" + listen->host + "]" : listen->host) + ":" + std::to_string(listener.port);
  return listener;
}

// The deliveries of `worker` and `all`: the senders (HTTP: one thread, libcurl's multi
// interface; each broker: a thread per connection, and librdkafka's and libnats's own
// threads: docs/architecture.md), the router that picks one by the url's scheme, and the
// dispatcher that claims, sends through it and records. The dispatcher is last: it is
// destroyed first, so nothing sends through a transport being destroyed.
struct WorkerPart {
  std::unique_ptr<CurlSender> sender;
  std::unique_ptr<Resolver> broker_resolver;
  std::shared_ptr<BrokerLimits> broker_limits;
  std::shared_ptr<LookupShares> broker_lookups;
  std::unique_ptr<AmqpTransport> amqp;
  std::unique_ptr<NatsTransport> nats;
  std::unique_ptr<RedisTransport> redis;
  std::unique_ptr<KafkaTransport> kafka;
  std::unique_ptr<TransportRouter> router;
  std::unique_ptr<Dispatcher> dispatcher;
};

// A broker transport with the settings every one of them takes, and what they share: the
// connections open at once (WEBHOOKD_MAX_BROKER_CONNECTIONS, 16 per tenant), one resolver
// of 64 lookups and each tenant's share of it (8).
template <typename T>
std::unique_ptr<T> MakeTransport(const Config& config, WorkerPart& part) {
  typename T::Options options;
  options.attempt_timeout = config.attempt_timeout;
  options.allow_private = config.allow_private_destinations;
  options.resolver = part.broker_resolver.get();
  options.limits = part.broker_limits;
  options.lookups = part.broker_lookups;
  return std::make_unique<T>(options);
}

WorkerPart MakeWorker(Store& store, Clock& clock, Random& random, const RetryPolicy& policy,
                      const Config& config, Tracing& tracing, Metrics& metrics) {
  CurlSender::Options sender_options;
  sender_options.connect_timeout = config.connect_timeout;
  sender_options.attempt_timeout = config.attempt_timeout;
  sender_options.allow_private = config.allow_private_destinations;
  sender_options.proxy = config.egress_proxy;
  WorkerPart part;
  part.sender = std::make_unique<CurlSender>(sender_options);
  part.broker_resolver = std::make_unique<SystemResolver>(config.attempt_timeout);
  part.broker_limits = std::make_shared<BrokerLimits>(config.max_broker_connections);
  part.broker_lookups = std::make_shared<LookupShares>(8);
  part.amqp = MakeTransport<AmqpTransport>(config, part);
  part.nats = MakeTransport<NatsTransport>(config, part);
  part.redis = MakeTransport<RedisTransport>(config, part);
  part.kafka = MakeTransport<KafkaTransport>(config, part);
  part.router = std::make_unique<TransportRouter>(*part.sender);
  part.router->Add(Transport::kAmqp, *part.amqp);
  part.router->Add(Transport::kNats, *part.nats);
  part.router->Add(Transport::kRedis, *part.redis);
  part.router->Add(Transport::kKafka, *part.kafka);
  Dispatcher::Options options;
  options.concurrency = config.worker_concurrency;
  options.claim_batch = std::min(config.worker_concurrency, 128);
  options.lease = config.lease;
  options.default_max_in_flight = config.destination_max_in_flight;
  options.protection.circuit = {config.circuit_threshold, config.circuit_cooldown};
  options.protection.disable_after = config.disable_after;
  options.spans = tracing.sink();
  options.sampler = tracing.sampler();
  part.dispatcher =
      std::make_unique<Dispatcher>(store, *part.router, clock, random, policy, options, &metrics);
  return part;
}

// Stores the bootstrap admin key on a thread of its own while the database is not up
// yet. A revoked or expired key found then stops the process as a signal would; Serve
// exits 1.
class BootstrapRetry {
 public:
  BootstrapRetry(Store& store, std::string hash, const std::atomic<bool>& stopping)
      : thread_([this, &store, hash = std::move(hash), &stopping] {
          for (int i = 0; !stopping; ++i) {
            auto ensured = store.EnsureAdminKey(hash);
            if (ensured && *ensured != KeyStore::Bootstrap::kLive) {
              refused_ = *ensured;
              kill(getpid(), SIGTERM);
              return;
            }
            if (ensured) return;
            if (i == 0) Log(LogLevel::kWarn, "bootstrap admin key not stored yet; retrying");
            std::this_thread::sleep_for(std::chrono::milliseconds(500));
          }
        }) {}
  BootstrapRetry(const BootstrapRetry&) = delete;
  BootstrapRetry& operator=(const BootstrapRetry&) = delete;
  ~BootstrapRetry() { Join(); }
  void Join() {
    if (thread_.joinable()) thread_.join();
  }
  KeyStore::Bootstrap refused() const { return refused_; }

 private:
  std::atomic<KeyStore::Bootstrap> refused_{KeyStore::Bootstrap::kLive};
  std::thread thread_;
};

// Runs the listener on a thread and the claim loop on this one until SIGTERM or SIGINT
// (or the listener ends on its own), then stops them in order: the listener closes, the
// dispatcher drains.
void RunUntilStopped(HttpServer* http, Dispatcher* dispatcher, const sigset_t& stop_signals,
                     std::atomic<bool>& stopping, BootstrapRetry* bootstrap) {
  std::thread http_thread;
  if (http != nullptr) http_thread = std::thread([http] { http->Run(); });
  std::atomic<bool> signalled{false};
  std::thread signal_thread([&] {
    int sig = 0;
    sigwait(&stop_signals, &sig);
    if (signalled.exchange(true)) return;  // woken by ourselves below
    Log(LogLevel::kInfo, "stopping", {{"signal", sig}});
    stopping = true;
    if (http != nullptr) http->Stop();
    if (dispatcher != nullptr) dispatcher->Stop();
  });

  if (dispatcher != nullptr) dispatcher->Run();  // returns after Stop(), drained
  if (http_thread.joinable()) http_thread.join();
  stopping = true;
  if (bootstrap != nullptr) bootstrap->Join();
  // Nothing was signalled (the listener failed on its own): release the waiting thread.
  // SIGTERM is blocked in every thread: this ends the signal thread's sigwait, it does not
  // kill it.
  if (!signalled.exchange(true)) {
    // NOLINTNEXTLINE(bugprone-bad-signal-to-kill-thread)
    pthread_kill(signal_thread.native_handle(), SIGTERM);
  }
  signal_thread.join();
}

int64_t RaisedOpenFiles() {
  // Idle connections are bounded by the per-client cap and the listener's budget, not by
  // a default soft limit of 1,024 that a few hundred connections exhaust.
  auto raised = RaiseOpenFileLimit();
  if (raised) return *raised;
  Log(LogLevel::kWarn, "could not raise the open-file limit", {{"error", raised.error().message}});
  return 1024;
}

}  // namespace

int Serve(const std::vector<std::string>& args, Mode mode) {
  const bool api = mode != Mode::kWorker;
  const bool worker = mode != Mode::kServer;
  if (WantsHelp(args)) {
    std::fputs(ServeHelp().c_str(), stdout);
    return 0;
  }
  if (!args.empty()) return Usage("unexpected argument " + args.front() + "; see --help");
  auto config = LoadOrComplain();
  if (!config) return 2;
  const sigset_t stop_signals = BlockStopSignals();
  const int64_t open_files = RaisedOpenFiles();

  SystemClock clock;
  SystemRandom random;
  SystemResolver resolver;
  Metrics metrics;
  // OpenTelemetry's OTEL_* variables (docs/tracing.md): spans go to an OTLP exporter's
  // thread when an endpoint is set. Read before anything is opened, so a bad setting
  // stops start-up as a bad WEBHOOKD_* one does: exit 2, one line naming the variable.
  auto tracing_or = Tracing::FromEnv(metrics);
  if (!tracing_or) {
    std::fprintf(stderr, "webhookd: %s\n", tracing_or.error().message.c_str());
    return 2;
  }
  Tracing& tracing = **tracing_or;
  auto store_owner = OpenStore(*config, api ? StoreUse::kServer : StoreUse::kWorker);
  Store& store = *store_owner;
  CachedGauges gauges(store);
  if (CheckStoredCredentials(store, *config) != 0) return 1;

  // The bootstrap key, once before serving when the database answers: a revoked or expired
  // one stays so, and start-up fails rather than serve without the key the operator expects.
  std::optional<std::string> bootstrap_hash;
  if (api && config->bootstrap_admin_key) {
    bootstrap_hash = HashApiKey(*config->bootstrap_admin_key);
    auto ensured = store.EnsureAdminKey(*bootstrap_hash);
    if (ensured && *ensured != KeyStore::Bootstrap::kLive) return RefuseBootstrapKey(*ensured);
    if (ensured) bootstrap_hash.reset();  // stored; otherwise retried in the background
  }

  // Retention, subjects' erasures and the erasing of expired secrets, in the processes that
  // serve the API (`server`, `all`): one thread, woken by the API when an erasure is asked for.
  std::unique_ptr<Purger> purger;
  if (api) {
    purger = std::make_unique<Purger>(store, Purger::Options{config->retention}, &metrics, &store);
    purger->Start();
  }
  // Destinations' recoveries, in the same processes: one thread, woken by the API when a
  // recovery is asked for; the store lets one process carry out a recovery at a time.
  std::unique_ptr<Recoverer> recoverer;
  if (api) {
    recoverer = std::make_unique<Recoverer>(store, Recoverer::Options{}, &metrics);
    recoverer->Start();
  }

  ApiPart rest;
  if (api)
    rest = MakeApi(store, resolver, *config, tracing, metrics, purger.get(), recoverer.get());
  auto listener = MakeListener(store, rest, *config, mode, open_files, metrics, gauges);
  if (!listener) {
    std::fprintf(stderr, "webhookd: %s\n", listener.error().message.c_str());
    return 1;
  }

  std::atomic<bool> stopping{false};
  std::unique_ptr<BootstrapRetry> bootstrap;
  if (bootstrap_hash) {
    bootstrap = std::make_unique<BootstrapRetry>(store, std::move(*bootstrap_hash), stopping);
  }

  RetryPolicy policy(config->retry_schedule, config->retry_jitter);
  WorkerPart deliveries;
  if (worker) deliveries = MakeWorker(store, clock, random, policy, *config, tracing, metrics);

  Log(LogLevel::kInfo, "webhookd started",
      {{"mode", api && worker ? "all"
                : api         ? "server"
                              : "worker"},
       {"port", listener->port},
       {"version", WEBHOOKD_VERSION}});
  if (listener->http) {
    // The port bound, for whoever started the process with port 0; a log line like the
    // others, so a reader of the log parses every line as JSON.
    Log(LogLevel::kInfo, "listening", {{"addr", listener->addr}});
  }
  RunUntilStopped(listener->http.get(), deliveries.dispatcher.get(), stop_signals, stopping,
                  bootstrap.get());
  if (recoverer) recoverer->Stop();
  if (purger) purger->Stop();
  Log(LogLevel::kInfo, "webhookd stopped");
  const KeyStore::Bootstrap refused = bootstrap ? bootstrap->refused() : KeyStore::Bootstrap::kLive;
  if (refused != KeyStore::Bootstrap::kLive) return RefuseBootstrapKey(refused);
  return 0;
}

}  // namespace webhookd::cmd
