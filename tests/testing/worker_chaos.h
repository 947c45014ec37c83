#pragma once

#include <signal.h>

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "tests/testing/webhookd_process.h"

namespace webhookd::testing {

// `count` `webhookd worker` processes on `url`, and a thread that SIGKILLs one of them at
// random every 0.5-2 s and starts a replacement, until Stop() or destruction (so an
// ASSERT that returns early still joins it). The fault tests' crashed workers.
class WorkerChaos {
 public:
  WorkerChaos(std::string url, std::map<std::string, std::string> env, int count)
      : url_(std::move(url)), env_(std::move(env)) {
    for (int i = 0; i < count; ++i) {
      workers_.push_back(std::make_unique<WebhookdProcess>(url_, "worker", env_));
    }
    thread_ = std::thread([this] { Run(); });
  }
  ~WorkerChaos() { Stop(); }
  WorkerChaos(const WorkerChaos&) = delete;
  WorkerChaos& operator=(const WorkerChaos&) = delete;

  // No more kills; the workers alive go on.
  void Stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  int kills() const { return kills_.load(); }

 private:
  void Run() {
    using namespace std::chrono_literals;
    std::mt19937 rng(std::random_device{}());
    std::uniform_int_distribution<int> pause_ms(500, 2000);
    std::uniform_int_distribution<size_t> pick(0, workers_.size() - 1);
    while (!stop_) {
      const auto until =
          std::chrono::steady_clock::now() + std::chrono::milliseconds(pause_ms(rng));
      while (!stop_ && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(20ms);
      if (stop_) break;
      std::lock_guard lock(mu_);
      auto& victim = workers_[pick(rng)];
      victim->process().Signal(SIGKILL);
      victim->process().Wait(10s);
      ++kills_;
      victim = std::make_unique<WebhookdProcess>(url_, "worker", env_);
    }
  }

  const std::string url_;
  const std::map<std::string, std::string> env_;
  std::mutex mu_;
  std::vector<std::unique_ptr<WebhookdProcess>> workers_;  // guarded by mu_ once running
  std::atomic<bool> stop_{false};
  std::atomic<int> kills_{0};
  std::thread thread_;
};

}  // namespace webhookd::testing
