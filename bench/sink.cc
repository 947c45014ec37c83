// bench_sink: a fast webhook receiver for the benchmark.
//
//   POST /hang...   never answers in time: holds the request --hang-ms, then 200
//   POST .../slow/... a real receiver: answers after a log-normal wait (median
//                   --slow-median-ms, 99th percentile --slow-p99-ms), 503 for
//                   --slow-fail-permille of requests (counted apart), else 200
//   POST anything   200 at once, counted; with --record 1 also the arrival time per
//                   webhook-id (the first arrival of each id)
//   GET  /stats     "ok=N hang=M"
//   GET  /arrivals  one "<webhook-id> <steady-clock ns>" line per recorded arrival
#include <signal.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <mutex>
#include <random>
#include <thread>
#include <unordered_map>

#include "bench/bench_util.h"

namespace {

constexpr const char* kUsage =
    R"(Usage: bench_sink [--port N] [--threads 256] [--hang-ms 7000] [--record 0|1]
                  [--backlog 1024] [--slow-median-ms 100] [--slow-p99-ms 500]
                  [--slow-fail-permille 10]
  A receiver: POST /hang... waits --hang-ms before answering; a POST whose path holds
  /slow/ waits a log-normal time (median --slow-median-ms, 99th percentile
  --slow-p99-ms) and answers 503 to --slow-fail-permille of requests, 200 to the rest;
  every other POST gets 200 at once. GET /stats answers "ok=N hang=M failed=F" (F: the
  503s); GET /arrivals lists "<webhook-id> <ns>" (CLOCK_MONOTONIC) for the first arrival
  of each webhook-id when --record is 1. Each request waiting holds one of --threads.
)";

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

int main(int argc, char** argv) {
  const webhookd::bench::Flags flags(argc, argv, kUsage);
  const auto hang = std::chrono::milliseconds(static_cast<int64_t>(flags.Num("hang-ms", 7000)));
  const bool record = flags.Num("record", 0) != 0;
  // Log-normal: the median is exp(mu), the 99th percentile exp(mu + 2.3263 sigma).
  const double slow_median_ms = flags.Num("slow-median-ms", 100);
  const double slow_mu = std::log(slow_median_ms);
  const double slow_sigma = std::log(flags.Num("slow-p99-ms", 500) / slow_median_ms) / 2.3263;
  const double slow_fail = flags.Num("slow-fail-permille", 10) / 1000.0;
  signal(SIGPIPE, SIG_IGN);

  std::atomic<int64_t> ok{0};
  std::atomic<int64_t> hung{0};
  std::atomic<int64_t> failed{0};
  std::mutex mu;
  std::unordered_map<std::string, int64_t> arrivals;  // guarded by mu

  httplib::Server http;
  webhookd::bench::ConfigureLikeWebhookd(http, static_cast<int>(flags.Num("threads", 256)),
                                         1 << 20);
  http.Post(".*", [&](const httplib::Request& req, httplib::Response& res) {
    if (req.path.starts_with("/hang")) {
      hung.fetch_add(1);
      std::this_thread::sleep_for(hang);
      res.status = 200;
      return;
    }
    if (req.path.find("/slow/") != std::string::npos) {
      thread_local std::mt19937_64 rng{std::random_device{}()};
      std::lognormal_distribution<double> wait_ms(slow_mu, slow_sigma);
      std::this_thread::sleep_for(std::chrono::microseconds(std::llround(wait_ms(rng) * 1000)));
      if (std::uniform_real_distribution<double>(0, 1)(rng) < slow_fail) {
        failed.fetch_add(1);
        res.status = 503;
        return;
      }
    }
    if (record) {
      const int64_t now = NowNs();
      std::lock_guard lock(mu);
      arrivals.emplace(req.get_header_value("webhook-id"), now);
    }
    ok.fetch_add(1);
    res.status = 200;
  });
  http.Get("/stats", [&](const httplib::Request&, httplib::Response& res) {
    res.set_content("ok=" + std::to_string(ok.load()) + " hang=" + std::to_string(hung.load()) +
                        " failed=" + std::to_string(failed.load()),
                    "text/plain");
  });
  http.Get("/arrivals", [&](const httplib::Request&, httplib::Response& res) {
    std::string out;
    {
      std::lock_guard lock(mu);
      out.reserve(arrivals.size() * 32);
      for (const auto& [id, ns] : arrivals) out += id + ' ' + std::to_string(ns) + '\n';
    }
    res.set_content(out, "text/plain");
  });
  return webhookd::bench::ListenAndServe(http, static_cast<int>(flags.Num("port", 0)),
                                         static_cast<int>(flags.Num("backlog", 1024)));
}
