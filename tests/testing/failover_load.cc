#include "tests/testing/failover_load.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <pqxx/pqxx>
#include <set>
#include <thread>

#include "core/ids.h"
#include "tests/testing/test_database.h"

namespace webhookd::testing {
namespace {

using Json = nlohmann::json;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr int kProducers = 8;
constexpr int kMaxEvents = 20000;
constexpr auto kMaxRun = 240s;
// WEBHOOKD_WORKER_CONCURRENCY: a worker holds at most this many claims when it loses
// its database, and each may be sent again after its lease (the duplicates' bound).
constexpr int kConcurrency = 16;

const std::map<std::string, std::string> kEnv = {
    {"WEBHOOKD_LEASE", "3s"},
    {"WEBHOOKD_ATTEMPT_TIMEOUT", "2s"},
    {"WEBHOOKD_RETRY_SCHEDULE", "200ms,500ms,1s,1s"},
    {"WEBHOOKD_WORKER_CONCURRENCY", std::to_string(kConcurrency)},
    {"WEBHOOKD_LOG_LEVEL", "info"},
};

std::map<std::string, std::string> WorkerEnv(int port) {
  auto env = kEnv;
  env["WEBHOOKD_WORKER_ADDR"] = "127.0.0.1:" + std::to_string(port);
  return env;
}

int ReadyStatus(int port) {
  httplib::Client client("127.0.0.1", port);
  client.set_connection_timeout(2, 0);
  client.set_read_timeout(5, 0);
  auto res = client.Get("/readyz");
  return res ? res->status : 0;
}

// Polls both processes' /readyz until 200, at most `bound`.
bool WaitReady(int server_port, int worker_port, std::chrono::seconds bound) {
  const auto until = Clock::now() + bound;
  while (Clock::now() < until) {
    if (ReadyStatus(server_port) == 200 && ReadyStatus(worker_port) == 200) return true;
    std::this_thread::sleep_for(250ms);
  }
  return false;
}

std::string Scalar(const std::string& url, const std::string& sql) {
  auto conn = TestDatabase::Connect(url);
  pqxx::nontransaction tx(*conn);
  auto r = tx.exec(sql);
  return r.empty() || r[0][0].is_null() ? "" : r[0][0].c_str();
}

}  // namespace

FailoverLoad::FailoverLoad(std::string url) : url_(std::move(url)), answers_(kMaxEvents) {
  receiver_ = std::make_unique<Receiver>();
  server_ = std::make_unique<WebhookdProcess>(url_, "server", kEnv);
  worker_port_ = FreePort();
  worker_ = std::make_unique<WebhookdProcess>(url_, "worker", WorkerEnv(worker_port_));
  auto res = server_->Call("POST", "/v1/destinations", {{"url", receiver_->url()}});
  if (res.status != 201) throw std::runtime_error("creating the destination: " + res.body);
}

FailoverLoad::~FailoverLoad() = default;

void FailoverLoad::Run(const std::vector<Fault>& faults, int warmup, int between, int after) {
  std::atomic<bool> stop{false};
  std::mutex mu;
  // Per fault, from its start to the next one's: the first and the last refusal.
  std::vector<std::pair<Clock::time_point, Clock::time_point>> refusals(faults.size());
  std::atomic<int> faulting{-1};
  std::vector<std::thread> producers;
  const auto start = Clock::now();
  for (int t = 0; t < kProducers; ++t) {
    producers.emplace_back([&] {
      auto client = server_->Client();
      client->set_connection_timeout(2, 0);
      client->set_read_timeout(30, 0);
      for (int n = next_++; n < kMaxEvents && !stop; n = next_++) {
        const Json body = {{"type", "ha.test"}, {"payload", {{"n", n}}}};
        auto res = client->Post("/v1/events", body.dump(), "application/json");
        Answer& a = answers_[n];
        a.status = res ? res->status : 0;
        if (a.status == 202) a.id = Json::parse(res->body)["id"];
        ++answered_;
        if (const int f = faulting; a.status != 202 && f >= 0) {
          std::lock_guard lock(mu);
          auto& [first, last] = refusals[f];
          if (first == Clock::time_point{}) first = Clock::now();
          last = Clock::now();
        }
        // A steady rate that overlaps the fault; a refusal is followed by the pause its
        // Retry-After asks for, as a client would.
        std::this_thread::sleep_for(a.status == 202 ? 10ms : 250ms);
      }
    });
  }
  const auto wait_answered = [&](int n) {
    while (answered_ < n && Clock::now() - start < kMaxRun) std::this_thread::sleep_for(10ms);
  };
  int target = warmup;
  for (size_t i = 0; i < faults.size(); ++i) {
    const Fault& fault = faults[i];
    wait_answered(target);
    faulting = static_cast<int>(i);
    without_primary_s_.push_back(fault());
    target = answered_ + between;
  }
  wait_answered(target - between + after);
  stop = true;
  for (auto& p : producers) p.join();
  for (const auto& [first, last] : refusals) {
    refusing_s_.push_back(std::chrono::duration<double>(last - first).count());
  }
}

void FailoverLoad::Check(const std::string& name) {
  // ---- both processes rode it out ----
  EXPECT_TRUE(server_->process().Running()) << "webhookd server exited";
  EXPECT_TRUE(worker_->process().Running()) << "webhookd worker exited";
  EXPECT_TRUE(WaitReady(server_->port(), worker_port_, 60s))
      << "/readyz is not 200 again on both processes";

  // ---- drain: bounded, 120 s in all, 30 s (ten leases) without progress is a stall ----
  const auto drain_start = Clock::now();
  int64_t unfinished = -1, last = -1;
  auto progressed = drain_start;
  while (Clock::now() - drain_start < 120s && Clock::now() - progressed < 30s) {
    try {
      unfinished = std::stoll(Scalar(
          url_, "SELECT count(*) FROM delivery_rows WHERE status IN ('pending', 'in_flight')"));
    } catch (const std::exception&) {
      unfinished = -1;
    }
    if (unfinished == 0) break;
    if (unfinished != last) progressed = Clock::now();
    last = unfinished;
    std::this_thread::sleep_for(200ms);
  }
  ASSERT_EQ(unfinished, 0) << "deliveries still pending or in flight";
  std::this_thread::sleep_for(200ms);  // receivers finish answering

  // ---- the producers' log against the new primary ----
  const int sent = std::min<int>(next_, kMaxEvents);
  int accepted = 0, refused = 0, transport = 0;
  std::map<std::string, int> n_of_id;
  for (int n = 0; n < sent; ++n) {
    const Answer& a = answers_[n];
    if (a.status == 202) {
      ++accepted;
      n_of_id[a.id] = n;
    } else if (a.status == 503) {
      ++refused;
    } else if (a.status == 0) {
      ++transport;
    } else if (a.status != -1) {
      ADD_FAILURE() << "ingest of n=" << n << " answered " << a.status;
    }
  }
  std::map<int, std::string> id_in_db;
  {
    auto conn = TestDatabase::Connect(url_);
    pqxx::nontransaction tx(*conn);
    for (const auto& row : tx.exec("SELECT id, (payload::jsonb->>'n')::int FROM events")) {
      id_in_db[row[1].as<int>()] = FormatId(kEventPrefix, row[0].as<int64_t>());
    }
  }
  int lost_events = 0, kept_after_refusal = 0;
  for (const auto& [id, n] : n_of_id) {
    auto it = id_in_db.find(n);
    if (it == id_in_db.end() || it->second != id) ++lost_events;
  }
  for (const auto& [n, id] : id_in_db) {
    // Committed on the standby while its producer was told 503 or got no answer: the
    // commit's acknowledgement died with the primary. Allowed (the producer retries with
    // its idempotency key); counted.
    if (answers_[n].status != 202) ++kept_after_refusal;
  }

  // ---- what the receiver got ----
  int64_t lost = 0, unexpected = 0, duplicates = 0, mismatched = 0, received = 0;
  std::map<std::string, std::vector<std::string>> bodies;
  for (const Received& req : receiver_->requests()) {
    ++received;
    const std::string id = req.header("webhook-id");
    bodies[id].push_back(req.body);
    int n = -1;
    try {
      n = Json::parse(req.body)["data"]["n"].get<int>();
    } catch (const std::exception&) {
    }
    if (!id_in_db.contains(n) || id_in_db[n] != id) ++unexpected;
  }
  for (const auto& [id, list] : bodies) {
    duplicates += static_cast<int64_t>(list.size()) - 1;
    for (const auto& b : list) {
      if (b != list.front()) ++mismatched;
    }
  }
  for (const auto& [id, n] : n_of_id) {
    if (!bodies.contains(id)) ++lost;
  }
  const int64_t not_succeeded =
      std::stoll(Scalar(url_, "SELECT count(*) FROM delivery_rows WHERE status <> 'succeeded'"));

  const auto list = [](const std::vector<double>& seconds) {
    std::string out;
    for (double s : seconds) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%s%.2f", out.empty() ? "" : ", ", s);
      out += buf;
    }
    return out;
  };
  std::printf(
      "%s: %d events sent, %d accepted (202), %d refused (503), %d without an answer, %d "
      "kept although not acknowledged; %d 202'd events missing on the new primary, %lld "
      "never delivered, %lld duplicates, %lld unexpected; seconds without a primary, per "
      "fault: %s; refusals (first to last), per fault: %s s\n",
      name.c_str(), sent, accepted, refused, transport, kept_after_refusal, lost_events,
      static_cast<long long>(lost), static_cast<long long>(duplicates),
      static_cast<long long>(unexpected), list(without_primary_s_).c_str(),
      list(refusing_s_).c_str());
  std::fflush(stdout);

  EXPECT_GT(accepted, 1000) << "too few events were accepted to mean anything";
  EXPECT_EQ(lost_events, 0) << "202s for events that are not on the new primary";
  EXPECT_EQ(lost, 0) << "202'd events that never reached the receiver";
  EXPECT_EQ(unexpected, 0) << "webhooks for events that are not in the database";
  EXPECT_EQ(mismatched, 0) << "a duplicate with another body than the first send";
  EXPECT_LE(duplicates, static_cast<int64_t>(without_primary_s_.size()) * kConcurrency);
  EXPECT_EQ(not_succeeded, 0);
}

}  // namespace webhookd::testing
