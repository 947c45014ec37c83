#pragma once

#include <functional>

#include "worker/sender.h"

namespace webhookd {

// Starts sends without waiting for them; each one's result comes back through its
// callback. What the dispatcher drives.
class AsyncSender {
 public:
  using Done = std::function<void(SendResult)>;

  virtual ~AsyncSender() = default;

  // Thread-safe. `done` is called exactly once, on a thread of the sender's own, never
  // inside Start.
  virtual void Start(Outgoing request, Done done) = 0;

  // Sends accepted by Start that have not begun on the network are ended at once with
  // SendResult::not_started, so their claims can be handed back. Thread-safe.
  virtual void CancelUnstarted() = 0;
};

}  // namespace webhookd
