#pragma once

#include <string>

#include "base/clock.h"
#include "base/random.h"
#include "client/event.h"
#include "client/retry_budget.h"
#include "client/retry_schedule.h"
#include "client/sleeper.h"
#include "client/transport.h"

namespace webhookd::client {

struct PublishResult {
  enum class Outcome {
    kAccepted,  // 2xx; `body` is the API's answer
    kRefused,   // a 4xx that is not retried; `body` is the problem details
    kGaveUp,    // retries exhausted, not allowed, or an answer the API never gives
  };
  Outcome outcome = Outcome::kGaveUp;
  int status = 0;     // of the last response; 0 when the last attempt got none
  std::string body;   // of the last response
  std::string error;  // for a person: what the last attempt came to, and why it stopped
  int attempts = 0;   // requests sent for this event
  std::string idempotency_key;
};

// Publishes events to webhookd's POST /v1/events, retrying as `schedule` and `budget`
// allow. Every request carries an Idempotency-Key, so retries cannot publish an event
// twice. One publisher per thread (its transport is not shared); the budget may be.
class Publisher {
 public:
  struct Deps {
    Transport& transport;
    const RetrySchedule& schedule;
    RetryBudget& budget;
    Clock& clock;    // reads Retry-After dates
    Random& random;  // jitters waits
    Sleeper& sleeper;
  };

  // Borrows everything in `deps`; each must outlive the publisher. `path` is the route
  // of POST /v1/events under the API's URL.
  Publisher(Deps deps, std::string api_key, std::string path = "/v1/events");

  PublishResult Publish(const Event& event);

 private:
  Deps deps_;
  std::string authorization_;
  std::string path_;
};

// A fresh random Idempotency-Key: "send-" and 32 hex digits from the OS's CSPRNG.
std::string NewIdempotencyKey();

}  // namespace webhookd::client
