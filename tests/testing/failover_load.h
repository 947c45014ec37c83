#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tests/testing/receiver.h"
#include "tests/testing/webhookd_process.h"

namespace webhookd::testing {

// The failover tests' load and their verdict (docs/ha.md): a recording receiver, one
// `webhookd server` and one `webhookd worker` on a multi-host URL, and 8 producers
// posting events while the test takes the primary away. Check() then drains and asserts
// what §"what a failover keeps" promises: every 202'd event is on the new primary and
// delivered, no 202 for an event that is not there, duplicates only from claims in
// flight, neither process restarted, both ready again.
//
// Threads: the producers run on threads of their own between Run()'s start and its end;
// the faults run on the caller's thread, in order, while the producers go on.
class FailoverLoad {
 public:
  // A fault takes the primary away and returns once a new one takes writes; it answers
  // the seconds the cluster had no primary, as it measured them.
  using Fault = std::function<double()>;

  explicit FailoverLoad(std::string url);
  ~FailoverLoad();

  // Posts events from 8 producers; after `warmup` answers runs the first fault, and each
  // next one after `between` more; stops `after` answers after the last. Bounded: at
  // most 20,000 events and 240 s.
  void Run(const std::vector<Fault>& faults, int warmup = 600, int between = 600, int after = 600);

  // Drains (bounded) and checks; prints one line of figures headed by `name`.
  void Check(const std::string& name);

 private:
  struct Answer {
    int status = -1;  // 0: no answer (transport error); -1: never sent
    std::string id;   // the event id of a 202
  };

  std::string url_;
  std::unique_ptr<Receiver> receiver_;
  std::unique_ptr<WebhookdProcess> server_;
  std::unique_ptr<WebhookdProcess> worker_;
  int worker_port_ = 0;
  std::vector<Answer> answers_;
  std::atomic<int> next_{0};
  std::atomic<int> answered_{0};
  std::vector<double> without_primary_s_;
  std::vector<double> refusing_s_;  // per fault: its first refusal (503 or none) to its last
};

}  // namespace webhookd::testing
