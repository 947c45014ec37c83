#pragma once

#include <chrono>
#include <functional>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "tests/testing/receiver.h"

namespace webhookd::testing {

// A receiver that holds each request for `hold` and records, per request, when it arrived
// and how many requests (itself included) it was then holding.
class GaugeReceiver {
 public:
  struct Seen {
    std::chrono::steady_clock::time_point at;
    int concurrent = 0;
    int status = 0;
    std::string webhook_id;
  };
  using Status = std::function<int(int nth)>;

  GaugeReceiver(std::chrono::milliseconds hold, Status status)
      : status_(std::move(status)), receiver_([this, hold](const Received& r, int nth) {
          Seen seen;
          {
            std::lock_guard lock(mu_);
            seen.at = std::chrono::steady_clock::now();
            seen.concurrent = ++active_;
            seen.status = status_(nth);
            seen.webhook_id = r.header("webhook-id");
            seen_.push_back(seen);
          }
          std::this_thread::sleep_for(hold);
          {
            std::lock_guard lock(mu_);
            --active_;
          }
          Answer answer;
          answer.status = seen.status;
          return answer;
        }) {}

  std::string url() const { return receiver_.url(); }
  std::vector<Seen> seen() {
    std::lock_guard lock(mu_);
    return seen_;
  }
  size_t count() {
    std::lock_guard lock(mu_);
    return seen_.size();
  }
  // Distinct webhook-ids answered 2xx.
  size_t delivered() {
    std::lock_guard lock(mu_);
    std::set<std::string> ids;
    for (const Seen& s : seen_)
      if (s.status / 100 == 2) ids.insert(s.webhook_id);
    return ids.size();
  }

 private:
  std::mutex mu_;
  int active_ = 0;
  std::vector<Seen> seen_;
  Status status_;
  Receiver receiver_;
};

}  // namespace webhookd::testing
