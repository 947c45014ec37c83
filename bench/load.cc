// bench_load: the load generator. One keep-alive cpp-httplib client (TCP_NODELAY) per
// connection thread, every loop bounded in count and in time.
//
// Closed loop (--rate 0): each connection sends its next request as soon as the last one
// is answered, for --duration seconds or --max-requests requests.
// Open loop (--rate R): request i is scheduled at start + i/R; the next free connection
// takes it, waits for its time and sends it. Latency runs from the scheduled time, so a
// stalled server is charged for the requests it delayed (no coordinated omission).
//
// With --e2e-sink-port, each 202's event id is kept with its scheduled send time and the
// time its answer came; after the run the sink's arrival times are fetched and matched by
// webhook-id. e2e runs from the scheduled send to the arrival; lag from the answer to the
// arrival (what the delivery side adds once the event was accepted).
//
// Prints one line of "name=value" figures.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <latch>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <thread>
#include <unordered_map>
#include <vector>

#include "bench/bench_util.h"

namespace {

using Clock = std::chrono::steady_clock;

constexpr const char* kUsage = R"(Usage: bench_load --port N [options]
  --path /v1/events      request path (POST)
  --key KEY              sends "Authorization: Bearer KEY"
  --connections 64       keep-alive connections, one thread each
  --duration 10          seconds of load (hard cap)
  --max-requests N       stop after N requests (default: no count limit)
  --rate 0               0: closed loop; R > 0: open loop at R requests/s
  --e2e-sink-port P      match 202 event ids with the sink's arrivals (open loop)
  --e2e-wait 15          seconds to wait for the last arrivals
  --tenant T             publishes every event with "tenant_id": T
  --payload JSON         the event's payload (a JSON object) instead of the built-in one
Prints: requests= ok= failed= seconds= per_s= p50_ms= p99_ms= max_ms= [matched= e2e_p50_ms=
e2e_p99_ms= e2e_max_ms= lag_p50_ms= lag_p99_ms= lag_max_ms=]
)";

constexpr const char* kPayload =
    R"({"id":4242,"total":"9.99","currency":"EUR","customer":"cus_0042",)"
    R"("items":[{"sku":"sku_1","qty":2}]})";

int64_t ToNs(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

double Percentile(std::vector<double>& sorted, double p) {
  if (sorted.empty()) return NAN;
  const size_t rank = static_cast<size_t>(std::ceil(p * static_cast<double>(sorted.size())));
  return sorted[std::clamp<size_t>(rank, 1, sorted.size()) - 1];
}

std::string Summary(const std::string& prefix, std::vector<double>& ms) {
  std::sort(ms.begin(), ms.end());
  char line[160];
  std::snprintf(line, sizeof line, " %sp50_ms=%.3f %sp99_ms=%.3f %smax_ms=%.3f", prefix.c_str(),
                Percentile(ms, 0.50), prefix.c_str(), Percentile(ms, 0.99), prefix.c_str(),
                ms.empty() ? NAN : ms.back());
  return line;
}

std::unique_ptr<httplib::Client> NewClient(int port) {
  auto client = std::make_unique<httplib::Client>("127.0.0.1", port);
  client->set_keep_alive(true);
  client->set_tcp_nodelay(true);
  client->set_connection_timeout(2);
  client->set_read_timeout(10);
  client->set_write_timeout(10);
  return client;
}

// An accepted event: its id, when it was scheduled and when its 202 came.
struct Sent {
  std::string id;
  int64_t scheduled_ns = 0;
  int64_t answered_ns = 0;
};

struct Results {
  std::mutex mu;
  std::vector<double> latency_ms;
  std::vector<Sent> sent;
  int64_t ok = 0;
  int64_t failed = 0;
  std::string first_error;
};

}  // namespace

// The end-to-end latencies: from each accepted event's scheduled send to its first
// arrival at the sink on `sink_port`, polled for at most `wait_s`. `lost` requests were
// never accepted or never sent.
void PrintEndToEnd(int sink_port, double wait_s, const Results& results, int64_t lost) {
  // The sink keeps the first arrival of each webhook-id; poll until every sent id arrived.
  std::unordered_map<std::string, int64_t> arrivals;
  auto client = NewClient(sink_port);
  const auto give_up = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                          std::chrono::duration<double>(wait_s));
  for (;;) {
    if (auto res = client->Get("/arrivals"); res && res->status == 200) {
      std::istringstream lines(res->body);
      std::string id;
      int64_t ns = 0;
      arrivals.clear();
      while (lines >> id >> ns) arrivals.emplace(id, ns);
    }
    size_t matched = 0;
    for (const Sent& s : results.sent) matched += arrivals.count(s.id);
    if (matched == results.sent.size() || Clock::now() >= give_up) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  std::vector<double> e2e_ms;
  std::vector<double> lag_ms;
  for (const Sent& s : results.sent) {
    if (auto it = arrivals.find(s.id); it != arrivals.end()) {
      e2e_ms.push_back(static_cast<double>(it->second - s.scheduled_ns) / 1e6);
      // Below 0 when the webhook arrived before the client read its 202.
      lag_ms.push_back(static_cast<double>(it->second - s.answered_ns) / 1e6);
    }
  }
  const size_t matched = e2e_ms.size();
  // Never matched at the sink, never accepted, never sent: infinitely late, all three.
  e2e_ms.insert(e2e_ms.end(), results.sent.size() - matched + static_cast<size_t>(lost), INFINITY);
  // An accepted event that never arrived lags without end; one never accepted has no lag.
  lag_ms.insert(lag_ms.end(), results.sent.size() - matched, INFINITY);
  std::printf(" matched=%zu unmatched=%zu", matched, results.sent.size() - matched);
  std::printf("%s", Summary("e2e_", e2e_ms).c_str());
  std::printf("%s", Summary("lag_", lag_ms).c_str());
}

// The same event, with a tenant when asked: the body grows by the field alone.
std::optional<std::string> RequestBody(const webhookd::bench::Flags& flags) {
  const std::string payload = flags.Str("payload", kPayload);
  if (auto doc = nlohmann::json::parse(payload, nullptr, false); !doc.is_object()) {
    std::fprintf(stderr, "bench_load: --payload must be a JSON object\n");
    return std::nullopt;
  }
  std::string request_body = R"({"type":"order.created","payload":)" + payload + "}";
  if (const std::string tenant = flags.Str("tenant", ""); !tenant.empty()) {
    request_body.insert(request_body.size() - 1, R"(,"tenant_id":")" + tenant + "\"");
  }
  return request_body;
}

int main(int argc, char** argv) {
  const webhookd::bench::Flags flags(argc, argv, kUsage);
  const int port = static_cast<int>(flags.Num("port", 0));
  const std::string path = flags.Str("path", "/v1/events");
  const std::string key = flags.Str("key", "");
  const int connections = static_cast<int>(flags.Num("connections", 64));
  const double duration_s = flags.Num("duration", 10);
  const double rate = flags.Num("rate", 0);
  const int sink_port = static_cast<int>(flags.Num("e2e-sink-port", 0));
  const double e2e_wait_s = flags.Num("e2e-wait", 15);
  int64_t max_requests = static_cast<int64_t>(flags.Num("max-requests", 1e15));
  const std::optional<std::string> body = RequestBody(flags);
  if (!body) return 2;
  const std::string& request_body = *body;
  if (port <= 0 || connections <= 0 || duration_s <= 0 || rate < 0) {
    std::fprintf(stderr, "bench_load: need --port, and positive --connections and --duration\n");
    return 2;
  }
  if (rate > 0) max_requests = std::min<int64_t>(max_requests, std::llround(rate * duration_s));

  httplib::Headers headers;
  if (!key.empty()) headers.emplace("Authorization", "Bearer " + key);
  const auto duration =
      std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(duration_s));
  const auto interval =
      rate > 0
          ? std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(1.0 / rate))
          : Clock::duration::zero();
  std::atomic<int64_t> next{0};
  Results results;

  // The clock starts once every connection is open, as in a warm keep-alive pool.
  std::latch connected(connections);
  Clock::time_point start, deadline, hard_deadline;
  std::once_flag start_once;
  auto set_start = [&] {
    start = Clock::now() + std::chrono::milliseconds(20);
    deadline = start + duration;
    // Open loop: requests fall behind when the server stalls; give them a little grace,
    // then stop, whatever is left.
    hard_deadline = deadline + (rate > 0 ? std::chrono::seconds(5) : Clock::duration{});
  };

  auto run = [&] {
    auto client = NewClient(port);
    // Opens the connection with a request that is not counted (any answer will do).
    for (int i = 0; i < 20 && !client->Get("/healthz"); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    connected.arrive_and_wait();
    std::call_once(start_once, set_start);
    std::vector<double> latency_ms;
    std::vector<Sent> sent;
    int64_t ok = 0, failed = 0;
    std::string first_error;
    std::this_thread::sleep_until(start);
    for (;;) {
      const int64_t i = next.fetch_add(1);
      if (i >= max_requests) break;
      Clock::time_point scheduled = Clock::now();
      if (rate > 0) {
        scheduled = start + interval * i;
        std::this_thread::sleep_until(scheduled);
      }
      if (Clock::now() >= (rate > 0 ? hard_deadline : deadline)) break;
      auto res = client->Post(path.c_str(), headers, request_body, "application/json");
      const auto done = Clock::now();
      if (res && res->status >= 200 && res->status < 300) {
        ++ok;
        latency_ms.push_back(std::chrono::duration<double, std::milli>(done - scheduled).count());
        if (sink_port > 0) {
          auto body = nlohmann::json::parse(res->body, nullptr, false);
          if (body.is_object() && body.contains("id") && body["id"].is_string())
            sent.push_back({body["id"].get<std::string>(), ToNs(scheduled), ToNs(done)});
        }
      } else {
        ++failed;
        if (first_error.empty())
          first_error = res ? "HTTP " + std::to_string(res->status) + " " + res->body.substr(0, 200)
                            : "transport error " + httplib::to_string(res.error());
        if (!res) client = NewClient(port);
      }
    }
    std::lock_guard lock(results.mu);
    results.latency_ms.insert(results.latency_ms.end(), latency_ms.begin(), latency_ms.end());
    results.sent.insert(results.sent.end(), sent.begin(), sent.end());
    results.ok += ok;
    results.failed += failed;
    if (results.first_error.empty()) results.first_error = first_error;
  };
  std::vector<std::thread> threads;
  for (int c = 0; c < connections; ++c) threads.emplace_back(run);
  for (auto& t : threads) t.join();
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();

  if (!results.first_error.empty())
    std::fprintf(stderr, "bench_load: first failure: %s\n", results.first_error.c_str());
  std::printf("requests=%lld ok=%lld failed=%lld seconds=%.3f per_s=%.1f",
              static_cast<long long>(results.ok + results.failed),
              static_cast<long long>(results.ok), static_cast<long long>(results.failed), seconds,
              static_cast<double>(results.ok) / seconds);
  // Open loop: every scheduled request counts. One never sent (still unsent at the hard
  // deadline) or answered with a failure is infinitely late, so a server that falls
  // behind cannot improve its percentiles by the requests it never took.
  int64_t unsent = 0;
  if (rate > 0) {
    unsent = std::max<int64_t>(0, max_requests - results.ok - results.failed);
    results.latency_ms.insert(results.latency_ms.end(),
                              static_cast<size_t>(unsent + results.failed), INFINITY);
    std::printf(" scheduled=%lld sent=%lld", static_cast<long long>(max_requests),
                static_cast<long long>(results.ok + results.failed));
  }
  std::printf("%s", Summary("", results.latency_ms).c_str());

  if (sink_port > 0) PrintEndToEnd(sink_port, e2e_wait_s, results, unsent + results.failed);
  std::printf("\n");
  return results.ok > 0 ? 0 : 1;
}
