// bench_sink: the webhook receiver of the benchmark, and its check that deliveries are
// signed and not repeated.
//
//   POST /hang...   never answers in time: holds the request --hang-ms, then 200
//   POST .../slow/... a real receiver: answers after a log-normal wait (median
//                   --slow-median-ms, 99th percentile --slow-p99-ms), 503 for
//                   --slow-fail-permille of requests (counted apart), else 200
//   POST anything   200 at once, counted; with --record 1 also the time of the first 2xx
//                   answer per webhook-id
//   GET  /stats     "ok=N hang=M failed=F unique=U dup=D bad_sig=B"
//   GET  /arrivals  one "<webhook-id> <steady-clock ns>" line per recorded arrival
//   POST /reset     zeroes the counters and forgets the webhook-ids (GET works too)
//
// The slow-receiver run holds 1,000-3,000 requests at once. One epoll loop with a timer
// heap holds them for a few hundred bytes each; a thread per request spent the machine's
// cores switching between sleepers, CPU the system under test then lacked.
//
// A webhook-id answered 2xx twice at one path (one destination) is a duplicate delivery;
// an id answered 503 and then 200 is a retry doing its job, so only 2xx answers enter the
// count.
#include <signal.h>
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "bench/bench_util.h"
#include "bench/http_loop.h"
#include "bench/webhook_signature.h"

namespace {

using webhookd::bench::Request;
using webhookd::bench::Response;

constexpr const char* kUsage =
    R"(Usage: bench_sink [--port N] [--hang-ms 7000] [--record 0|1] [--backlog 1024]
                  [--slow-median-ms 100] [--slow-p99-ms 500] [--slow-fail-permille 10]
                  [--secret whsec_...] [--loops 1]
  A receiver: POST /hang... waits --hang-ms before answering; a POST whose path holds
  /slow/ waits a log-normal time (median --slow-median-ms, 99th percentile
  --slow-p99-ms) and answers 503 to --slow-fail-permille of requests, 200 to the rest;
  every other POST gets 200 at once.
  With --secret, every POST but /hang must carry webhook-id, webhook-timestamp and a
  webhook-signature with a matching v1 entry (Standard Webhooks); one that does not is
  counted in bad_sig and answered all the same.
  GET /stats answers "ok=N hang=M failed=F unique=U dup=D bad_sig=B": F the 503s, U the
  (path, webhook-id) pairs answered 2xx, D the 2xx answers to a pair answered 2xx before.
  GET /arrivals lists "<webhook-id> <ns>" (CLOCK_MONOTONIC) for the first 2xx answer to
  each webhook-id when --record is 1. POST /reset zeroes every count.
  --loops N serves from N event-loop threads (default 1); --threads is accepted and
  ignored. Prints "listening on 127.0.0.1:PORT" once bound (--port 0, the default, picks
  one).
)";

class Sink final : public webhookd::bench::Handler {
 public:
  struct Options {
    int64_t hang_ns = 0;
    bool record = false;
    double slow_mu = 0;     // log-normal: the median is exp(mu), the 99th percentile
    double slow_sigma = 0;  // exp(mu + 2.3263 sigma)
    double slow_fail = 0;
    std::optional<std::string> key;  // checks signatures when set
  };

  explicit Sink(Options options) : options_(std::move(options)) {}

  int64_t WaitNs(const Request& request) override {
    if (request.method != "POST" || request.path == "/reset") return 0;
    if (request.path.starts_with("/hang")) {
      hung_.fetch_add(1, std::memory_order_relaxed);
      return options_.hang_ns;
    }
    Verify(request);
    if (!IsSlow(request)) return 0;
    std::lognormal_distribution<double> wait_ms(options_.slow_mu, options_.slow_sigma);
    return std::llround(wait_ms(Rng()) * 1000) * 1000;
  }

  Response Answer(const Request& request) override {
    if (request.path == "/reset" && (request.method == "POST" || request.method == "GET")) {
      Reset();
      return {200, "reset"};
    }
    if (request.method == "GET" && request.path == "/stats") return {200, Stats()};
    if (request.method == "GET" && request.path == "/arrivals") return {200, Arrivals()};
    if (request.method != "POST") return {404, {}};
    if (request.path.starts_with("/hang")) return {200, {}};
    if (IsSlow(request) &&
        std::uniform_real_distribution<double>(0, 1)(Rng()) < options_.slow_fail) {
      failed_.fetch_add(1, std::memory_order_relaxed);
      return {503, {}};
    }
    Succeeded(request);
    return {200, {}};
  }

 private:
  static bool IsSlow(const Request& request) {
    return request.path.find("/slow/") != std::string::npos;
  }

  static std::mt19937_64& Rng() {
    thread_local std::mt19937_64 rng{std::random_device{}()};
    return rng;
  }

  void Verify(const Request& request) {
    if (!options_.key) return;
    const std::string* id = request.Header("webhook-id");
    const std::string* timestamp = request.Header("webhook-timestamp");
    const std::string* signature = request.Header("webhook-signature");
    if (id == nullptr || timestamp == nullptr || signature == nullptr ||
        !webhookd::bench::SignatureMatches(*options_.key, *id, *timestamp, request.body,
                                           *signature)) {
      bad_sig_.fetch_add(1, std::memory_order_relaxed);
    }
  }

  void Succeeded(const Request& request) {
    ok_.fetch_add(1, std::memory_order_relaxed);
    const std::string* id = request.Header("webhook-id");
    if (id == nullptr || id->empty()) return;
    const int64_t now = webhookd::bench::SteadyNs();
    std::lock_guard lock(mu_);
    // One event fanned out to several destinations carries one webhook-id to each: a
    // duplicate is the same id at the same destination (its path) again.
    if (delivered_.insert(request.path + ' ' + *id).second) {
      ++unique_;
    } else {
      ++dup_;
    }
    if (options_.record) first_ok_ns_.try_emplace(*id, now);
  }

  std::string Stats() {
    std::lock_guard lock(mu_);
    return "ok=" + std::to_string(ok_.load()) + " hang=" + std::to_string(hung_.load()) +
           " failed=" + std::to_string(failed_.load()) + " unique=" + std::to_string(unique_) +
           " dup=" + std::to_string(dup_) + " bad_sig=" + std::to_string(bad_sig_.load());
  }

  std::string Arrivals() {
    std::string out;
    if (!options_.record) return out;
    std::lock_guard lock(mu_);
    out.reserve(first_ok_ns_.size() * 32);
    for (const auto& [id, ns] : first_ok_ns_) out += id + ' ' + std::to_string(ns) + '\n';
    return out;
  }

  void Reset() {
    std::lock_guard lock(mu_);
    ok_ = 0;
    hung_ = 0;
    failed_ = 0;
    bad_sig_ = 0;
    unique_ = 0;
    dup_ = 0;
    first_ok_ns_.clear();
    delivered_.clear();
  }

  const Options options_;
  std::atomic<int64_t> ok_{0};
  std::atomic<int64_t> hung_{0};
  std::atomic<int64_t> failed_{0};
  std::atomic<int64_t> bad_sig_{0};
  std::mutex mu_;
  int64_t unique_ = 0;                                    // guarded by mu_
  int64_t dup_ = 0;                                       // guarded by mu_
  std::unordered_map<std::string, int64_t> first_ok_ns_;  // guarded by mu_; with --record
  std::unordered_set<std::string> delivered_;             // "path id"; guarded by mu_
};

// Every waiting request holds a socket: the default soft limit would refuse connections
// long before the loop is busy.
void RaiseFileLimit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    setrlimit(RLIMIT_NOFILE, &limit);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const webhookd::bench::Flags flags(argc, argv, kUsage);
  Sink::Options options;
  options.hang_ns = static_cast<int64_t>(flags.Num("hang-ms", 7000) * 1e6);
  options.record = flags.Num("record", 0) != 0;
  const double slow_median_ms = flags.Num("slow-median-ms", 100);
  options.slow_mu = std::log(slow_median_ms);
  options.slow_sigma = std::log(flags.Num("slow-p99-ms", 500) / slow_median_ms) / 2.3263;
  options.slow_fail = flags.Num("slow-fail-permille", 10) / 1000.0;
  if (const std::string secret = flags.Str("secret", ""); !secret.empty()) {
    options.key = webhookd::bench::SecretKey(secret);
    if (!options.key || options.key->empty()) {
      std::fprintf(stderr, "--secret: expected whsec_ followed by base64\n%s", kUsage);
      return 2;
    }
  }
  const int loops = std::max(1, static_cast<int>(flags.Num("loops", 1)));
  const int port = static_cast<int>(flags.Num("port", 0));
  const int backlog = static_cast<int>(flags.Num("backlog", 1024));
  signal(SIGPIPE, SIG_IGN);
  RaiseFileLimit();

  int bound = 0;
  // --backlog 0 listens with 5, as webhookd's own API server does.
  const int listen_fd = webhookd::bench::ListenOnLoopback(port, backlog > 0 ? backlog : 5, bound);
  if (listen_fd < 0) {
    std::fprintf(stderr, "cannot listen on 127.0.0.1:%d\n", port);
    return 1;
  }
  std::printf("listening on 127.0.0.1:%d\n", bound);
  std::fflush(stdout);

  Sink sink(std::move(options));
  std::vector<std::unique_ptr<webhookd::bench::HttpLoop>> servers;
  for (int i = 0; i < loops; ++i) {
    servers.push_back(std::make_unique<webhookd::bench::HttpLoop>(listen_fd, sink));
  }
  for (int i = 1; i < loops; ++i) std::thread([&server = *servers[i]] { server.Run(); }).detach();
  servers[0]->Run();
}
