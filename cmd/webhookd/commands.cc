#include "cmd/webhookd/commands.h"

#include <pthread.h>
#include <signal.h>

#include <cstdio>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "core/address.h"
#include "core/api_key.h"
#include "core/config.h"
#include "core/ids.h"
#include "core/log.h"
#include "core/metrics.h"
#include "core/pg/migrator.h"
#include "core/pg/pg_store.h"
#include "core/random.h"
#include "core/retry_policy.h"
#include "server/api.h"
#include "server/auth.h"
#include "server/http_server.h"
#include "worker/dispatcher.h"
#include "worker/http_sender.h"

namespace webhookd::cmd {
namespace {

constexpr const char* kMigrateHelp = R"(Usage: webhookd migrate

Applies migrations/NNNN_name.sql (compiled into the binary) in order, each once, recording
them in schema_migrations. Safe to run concurrently and repeatedly.
Environment: DATABASE_URL.
)";

constexpr const char* kServeHelp = R"(Usage: webhookd server | worker | all

server  the REST API on WEBHOOKD_ADDR (default 127.0.0.1:8080), with /healthz, /readyz
        and /metrics
worker  delivers webhooks; serves /healthz, /readyz, /metrics on WEBHOOKD_WORKER_ADDR
        (default 127.0.0.1:9090; port 0 picks a free port; empty turns it off)
all     both in one process, everything on WEBHOOKD_ADDR

SIGTERM or SIGINT stops cleanly: the listener closes, deliveries in progress finish and
are recorded, unstarted ones are handed back, then the process exits 0.
Environment: DATABASE_URL, WEBHOOKD_ADDR, WEBHOOKD_WORKER_ADDR,
WEBHOOKD_BOOTSTRAP_ADMIN_KEY, WEBHOOKD_RETRY_SCHEDULE, WEBHOOKD_RETRY_JITTER,
WEBHOOKD_WORKER_CONCURRENCY, WEBHOOKD_DESTINATION_MAX_IN_FLIGHT, WEBHOOKD_CONNECT_TIMEOUT,
WEBHOOKD_ATTEMPT_TIMEOUT, WEBHOOKD_LEASE, WEBHOOKD_MAX_PAYLOAD_BYTES,
WEBHOOKD_ALLOW_PRIVATE_DESTINATIONS, WEBHOOKD_LOG_LEVEL.
)";

constexpr const char* kKeysHelp = R"(Usage:
  webhookd keys create --role publisher|admin [--name N]
      creates an API key and prints it once, alone on the last line
  webhookd keys list
      lists keys (id, role, name, created, revoked); never the key itself
  webhookd keys revoke ID
      revokes a key (ID as printed by list, e.g. key_3)
Environment: DATABASE_URL.
)";

constexpr const char* kDeadLettersHelp = R"(Usage:
  webhookd dead-letters list [--destination ID] [--since T] [--until T] [--reason R] [--limit N]
  webhookd dead-letters replay ID
  webhookd dead-letters replay --destination ID [--since T] [--until T] [--reason R]
  webhookd dead-letters replay --all [--since T] [--until T] [--reason R]

T is an RFC 3339 time (2026-01-02T03:04:05Z); R is exhausted or permanent_failure.
A replayed delivery is due at once with a fresh cycle of the retry schedule.
Environment: DATABASE_URL.
)";

bool WantsHelp(const std::vector<std::string>& args) {
  for (const auto& a : args) {
    if (a == "--help" || a == "-h") return true;
  }
  return false;
}

int Usage(const std::string& message) {
  std::fprintf(stderr, "webhookd: %s\n", message.c_str());
  return 2;
}

std::optional<Config> LoadOrComplain() {
  auto config = LoadConfig(ProcessEnv());
  if (!config) {
    std::fprintf(stderr, "webhookd: %s\n", config.error().message.c_str());
    return std::nullopt;
  }
  if (config->database_url.empty()) {
    std::fprintf(stderr,
                 "webhookd: DATABASE_URL: expected a PostgreSQL connection string, got nothing\n");
    return std::nullopt;
  }
  SetLogLevel(config->log_level);
  return *config;
}

// "--flag value" pairs; a bare argument is positional. Unknown flags are refused.
struct Flags {
  std::map<std::string, std::string> values;
  std::vector<std::string> positional;
};

std::optional<Flags> ParseFlags(const std::vector<std::string>& args,
                                const std::vector<std::string>& known,
                                const std::vector<std::string>& switches = {}) {
  Flags flags;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (!a.starts_with("--")) {
      flags.positional.push_back(a);
      continue;
    }
    if (std::find(switches.begin(), switches.end(), a) != switches.end()) {
      flags.values[a] = "true";
      continue;
    }
    if (std::find(known.begin(), known.end(), a) == known.end()) {
      Usage("unknown flag " + a + "; see --help");
      return std::nullopt;
    }
    if (i + 1 >= args.size()) {
      Usage(a + ": expected a value");
      return std::nullopt;
    }
    flags.values[a] = args[++i];
  }
  return flags;
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
  explicit CachedGauges(Store& store) : store_(store) {}
  Metrics::Gauges Get() {
    std::lock_guard lock(mu_);
    const auto now = std::chrono::steady_clock::now();
    if (now - fetched_ >= std::chrono::seconds(5)) {
      if (auto g = store_.CountDeliveries()) {
        gauges_ = {g->pending, g->retrying_over_24h, g->in_flight};
        fetched_ = now;
      }
    }
    return gauges_;
  }

 private:
  Store& store_;
  std::mutex mu_;
  Metrics::Gauges gauges_;
  std::chrono::steady_clock::time_point fetched_{};
};

}  // namespace

int Migrate(const std::vector<std::string>& args) {
  if (WantsHelp(args)) {
    std::fputs(kMigrateHelp, stdout);
    return 0;
  }
  if (!args.empty()) return Usage("migrate takes no arguments; see webhookd migrate --help");
  auto config = LoadOrComplain();
  if (!config) return 2;
  auto applied = pg::Migrate(config->database_url, pg::EmbeddedMigrations());
  if (!applied) {
    std::fprintf(stderr, "webhookd: %s\n", applied.error().message.c_str());
    return 1;
  }
  for (const auto& version : *applied) std::printf("applied %s\n", version.c_str());
  if (applied->empty()) std::puts("nothing to apply: the schema is up to date");
  return 0;
}

int Serve(const std::vector<std::string>& args, bool api, bool worker) {
  if (WantsHelp(args)) {
    std::fputs(kServeHelp, stdout);
    return 0;
  }
  if (!args.empty()) return Usage("unexpected argument " + args.front() + "; see --help");
  auto config = LoadOrComplain();
  if (!config) return 2;
  const sigset_t stop_signals = BlockStopSignals();

  SystemClock clock;
  SystemRandom random;
  SystemResolver resolver;
  Metrics metrics;
  pg::PgStore store(config->database_url, api ? 16 : 4);
  CachedGauges gauges(store);

  std::unique_ptr<Api> rest;
  std::unique_ptr<Authenticator> auth;
  if (api) {
    rest = std::make_unique<Api>(store, resolver, *config, &metrics);
    auth = std::make_unique<Authenticator>(store);
  }
  std::optional<ListenAddress> listen = api ? std::optional(config->addr) : config->worker_addr;
  std::unique_ptr<HttpServer> http;
  int port = 0;
  if (listen) {
    HttpServer::Options options{*listen, config->max_payload_bytes, api ? 128 : 4};
    options.serve_ui = config->serve_ui;
    http = std::make_unique<HttpServer>(
        store, rest.get(), auth.get(), options,
        [&metrics](std::string_view route, int status) { metrics.CountRequest(route, status); },
        [&metrics, &gauges] { return metrics.Render(gauges.Get()); });
    auto bound = http->Bind();
    if (!bound) {
      std::fprintf(stderr, "webhookd: %s: %s\n", api ? "WEBHOOKD_ADDR" : "WEBHOOKD_WORKER_ADDR",
                   bound.error().message.c_str());
      return 1;
    }
    port = *bound;
  }

  std::thread bootstrap;
  std::atomic<bool> stopping{false};
  if (api && config->bootstrap_admin_key) {
    // The database may not be up yet: keep trying in the background.
    bootstrap = std::thread([&] {
      const std::string hash = HashApiKey(*config->bootstrap_admin_key);
      for (int i = 0; !stopping; ++i) {
        if (store.EnsureAdminKey(hash)) return;
        if (i == 0) Log(LogLevel::kWarn, "bootstrap admin key not stored yet; retrying");
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
      }
    });
  }

  RetryPolicy policy(config->retry_schedule, config->retry_jitter);
  std::unique_ptr<HttpSender> sender;
  std::unique_ptr<Dispatcher> dispatcher;
  if (worker) {
    sender = std::make_unique<HttpSender>(
        resolver, HttpSender::Options{config->connect_timeout, config->attempt_timeout,
                                      config->allow_private_destinations});
    Dispatcher::Options options;
    options.concurrency = config->worker_concurrency;
    options.claim_batch = std::min(config->worker_concurrency, 128);
    options.lease = config->lease;
    options.default_max_in_flight = config->destination_max_in_flight;
    dispatcher =
        std::make_unique<Dispatcher>(store, *sender, clock, random, policy, options, &metrics);
  }

  std::thread http_thread;
  if (http) http_thread = std::thread([&] { http->Run(); });
  std::atomic<bool> signalled{false};
  std::thread signal_thread([&] {
    int sig = 0;
    sigwait(&stop_signals, &sig);
    if (signalled.exchange(true)) return;  // woken by ourselves below
    Log(LogLevel::kInfo, "stopping", {{"signal", sig}});
    stopping = true;
    if (http) http->Stop();
    if (dispatcher) dispatcher->Stop();
  });

  Log(LogLevel::kInfo, "webhookd started",
      {{"mode", api && worker ? "all"
                : api         ? "server"
                              : "worker"},
       {"port", port},
       {"version", WEBHOOKD_VERSION}});
  if (http)
    std::fprintf(stdout, "listening on %s:%d\n", listen->host.c_str(), port), std::fflush(stdout);

  if (dispatcher) dispatcher->Run();  // returns after Stop(), drained
  if (http_thread.joinable()) http_thread.join();
  stopping = true;
  if (bootstrap.joinable()) bootstrap.join();
  // Nothing was signalled (the listener failed on its own): release the waiting thread.
  if (!signalled.exchange(true)) pthread_kill(signal_thread.native_handle(), SIGTERM);
  signal_thread.join();
  Log(LogLevel::kInfo, "webhookd stopped");
  return 0;
}

int Keys(const std::vector<std::string>& args) {
  if (args.empty() || WantsHelp(args)) {
    std::fputs(kKeysHelp, args.empty() ? stderr : stdout);
    return args.empty() ? 2 : 0;
  }
  const std::string sub = args.front();
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  auto flags = ParseFlags(rest, {"--role", "--name"});
  if (!flags) return 2;
  if (sub != "create" && sub != "list" && sub != "revoke") {
    return Usage("keys: unknown subcommand \"" + sub + "\"; expected create, list or revoke");
  }
  if (sub == "create" && (flags->values.count("--role") == 0 || !flags->positional.empty())) {
    return Usage("keys create: --role publisher|admin is required");
  }
  std::optional<Role> role;
  if (sub == "create") {
    const std::string& r = flags->values["--role"];
    if (r == "publisher") role = Role::kPublisher;
    if (r == "admin") role = Role::kAdmin;
    if (!role) return Usage("--role: expected publisher or admin, got \"" + r + "\"");
  }
  std::optional<int64_t> revoke_id;
  if (sub == "revoke") {
    if (flags->positional.size() != 1) return Usage("keys revoke: expected one key id, e.g. key_3");
    revoke_id = ParseId(kApiKeyPrefix, flags->positional[0]);
    if (!revoke_id)
      return Usage("keys revoke: expected a key id like key_3, got \"" + flags->positional[0] +
                   "\"");
  }
  if (sub == "list" && (!flags->positional.empty() || !flags->values.empty())) {
    return Usage("keys list takes no arguments");
  }
  auto config = LoadOrComplain();
  if (!config) return 2;
  pg::PgStore store(config->database_url, 1);

  if (sub == "create") {
    const std::string key = GenerateApiKey();
    const std::string name = flags->values.count("--name") ? flags->values["--name"] : "";
    auto info = store.CreateApiKey(name, *role, HashApiKey(key));
    if (!info) {
      std::fprintf(stderr, "webhookd: %s\n", info.error().message.c_str());
      return 1;
    }
    std::printf("created %s (role %s%s%s); the key is shown once:\n%s\n",
                FormatId(kApiKeyPrefix, info->id).c_str(), std::string(RoleName(*role)).c_str(),
                name.empty() ? "" : ", name ", name.c_str(), key.c_str());
    return 0;
  }
  if (sub == "list") {
    auto keys = store.ListApiKeys();
    if (!keys) {
      std::fprintf(stderr, "webhookd: %s\n", keys.error().message.c_str());
      return 1;
    }
    std::printf("%-10s %-10s %-28s %-28s %s\n", "ID", "ROLE", "CREATED", "REVOKED", "NAME");
    for (const auto& k : *keys) {
      std::printf("%-10s %-10s %-28s %-28s %s\n", FormatId(kApiKeyPrefix, k.id).c_str(),
                  std::string(RoleName(k.role)).c_str(), FormatRfc3339(k.created_at).c_str(),
                  k.revoked_at ? FormatRfc3339(*k.revoked_at).c_str() : "-", k.name.c_str());
    }
    return 0;
  }
  auto revoked = store.RevokeApiKey(*revoke_id);
  if (!revoked) {
    std::fprintf(stderr, "webhookd: %s\n", revoked.error().message.c_str());
    return 1;
  }
  std::printf("revoked %s\n", flags->positional[0].c_str());
  return 0;
}

int DeadLetters(const std::vector<std::string>& args) {
  if (args.empty() || WantsHelp(args)) {
    std::fputs(kDeadLettersHelp, args.empty() ? stderr : stdout);
    return args.empty() ? 2 : 0;
  }
  const std::string sub = args.front();
  if (sub != "list" && sub != "replay") {
    return Usage("dead-letters: unknown subcommand \"" + sub + "\"; expected list or replay");
  }
  auto flags =
      ParseFlags({args.begin() + 1, args.end()},
                 {"--destination", "--since", "--until", "--reason", "--limit"}, {"--all"});
  if (!flags) return 2;
  DeadLetterFilter filter;
  if (auto it = flags->values.find("--destination"); it != flags->values.end()) {
    filter.destination_id = ParseId(kDestinationPrefix, it->second);
    if (!filter.destination_id)
      return Usage("--destination: expected an id like dst_12, got \"" + it->second + "\"");
  }
  for (const char* name : {"--since", "--until"}) {
    if (auto it = flags->values.find(name); it != flags->values.end()) {
      auto t = ParseRfc3339(it->second);
      if (!t)
        return Usage(std::string(name) + ": expected an RFC 3339 time, got \"" + it->second + "\"");
      (std::string_view(name) == "--since" ? filter.since : filter.until) = *t;
    }
  }
  if (auto it = flags->values.find("--reason"); it != flags->values.end()) {
    if (it->second != "exhausted" && it->second != "permanent_failure") {
      return Usage("--reason: expected exhausted or permanent_failure");
    }
    filter.reason = it->second;
  }
  Page page;
  page.limit = 100;
  if (auto it = flags->values.find("--limit"); it != flags->values.end()) {
    try {
      page.limit = std::stoi(it->second);
    } catch (const std::exception&) {
      page.limit = 0;
    }
    if (page.limit < 1 || page.limit > 1000) return Usage("--limit: expected 1 to 1000");
  }
  std::optional<int64_t> single;
  if (sub == "replay") {
    if (flags->positional.size() == 1) {
      single = ParseId(kDeadLetterPrefix, flags->positional[0]);
      if (!single)
        return Usage("dead-letters replay: expected an id like dlq_7, got \"" +
                     flags->positional[0] + "\"");
      if (filter.destination_id || filter.since || filter.until || filter.reason) {
        return Usage("dead-letters replay: give an id or filters, not both");
      }
    } else if (!flags->positional.empty()) {
      return Usage("dead-letters replay: expected at most one id");
    } else if (!filter.destination_id && !flags->values.count("--all")) {
      // A bare bulk replay is a big hammer: make the operator say so.
      return Usage("dead-letters replay: give an id, --destination ID, or --all");
    }
  } else if (!flags->positional.empty()) {
    return Usage("dead-letters list takes no positional arguments");
  }

  auto config = LoadOrComplain();
  if (!config) return 2;
  pg::PgStore store(config->database_url, 1);
  if (sub == "list") {
    auto listing = store.ListDeadLetters(filter, page);
    if (!listing) {
      std::fprintf(stderr, "webhookd: %s\n", listing.error().message.c_str());
      return 1;
    }
    std::printf("%-12s %-12s %-12s %-12s %-18s %-8s %-6s %-28s %s\n", "ID", "DELIVERY", "EVENT",
                "DESTINATION", "REASON", "ATTEMPTS", "CODE", "DEAD-LETTERED", "REPLAYED");
    for (const auto& d : listing->items) {
      std::printf("%-12s %-12s %-12s %-12s %-18s %-8d %-6s %-28s %s\n",
                  FormatId(kDeadLetterPrefix, d.id).c_str(),
                  FormatId(kDeliveryPrefix, d.delivery_id).c_str(),
                  FormatId(kEventPrefix, d.event_id).c_str(),
                  FormatId(kDestinationPrefix, d.destination_id).c_str(), d.reason.c_str(),
                  d.attempt_count,
                  d.last_status_code ? std::to_string(*d.last_status_code).c_str() : "-",
                  FormatRfc3339(d.dead_lettered_at).c_str(),
                  d.replayed_at ? FormatRfc3339(*d.replayed_at).c_str() : "-");
    }
    if (listing->next_before_id) {
      std::printf("(more: showing the newest %d)\n", page.limit);
    }
    return 0;
  }
  if (single) {
    auto delivery = store.ReplayDeadLetter(*single);
    if (!delivery) {
      std::fprintf(stderr, "webhookd: %s\n", delivery.error().message.c_str());
      return 1;
    }
    std::printf("replayed %s: delivery %s is pending again\n", flags->positional[0].c_str(),
                FormatId(kDeliveryPrefix, *delivery).c_str());
    return 0;
  }
  auto count = store.ReplayDeadLetters(filter);
  if (!count) {
    std::fprintf(stderr, "webhookd: %s\n", count.error().message.c_str());
    return 1;
  }
  std::printf("replayed %lld dead letters\n", static_cast<long long>(*count));
  return 0;
}

}  // namespace webhookd::cmd
