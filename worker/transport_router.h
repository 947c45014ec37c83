#pragma once

#include <map>

#include "net/broker_url.h"
#include "worker/async_sender.h"

namespace webhookd {

// The dispatcher's one sender: each message goes to the transport of its url's scheme
// (docs/brokers.md), HTTP through `http`. A message whose transport has none (a scheme
// not built yet) goes to `http`, which answers it with its own error about the scheme,
// on its own thread as AsyncSender requires.
class TransportRouter final : public AsyncSender {
 public:
  // Borrows `http`, which must outlive this object.
  explicit TransportRouter(AsyncSender& http) : http_(http) {}

  // Borrows `sender` for `transport` (not kHttp); it must outlive this object.
  void Add(Transport transport, AsyncSender& sender) { senders_[transport] = &sender; }

  // AsyncSender:
  void Start(Outgoing request, Done done) override;
  void CancelUnstarted() override;

 private:
  AsyncSender& http_;
  std::map<Transport, AsyncSender*> senders_;  // set before the first Start
};

}  // namespace webhookd
