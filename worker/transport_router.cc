#include "worker/transport_router.h"

namespace webhookd {

void TransportRouter::Start(Outgoing request, Done done) {
  AsyncSender* sender = &http_;
  if (auto it = senders_.find(TransportOfUrl(request.url)); it != senders_.end()) {
    sender = it->second;
  }
  sender->Start(std::move(request), std::move(done));
}

void TransportRouter::CancelUnstarted() {
  http_.CancelUnstarted();
  for (auto& [transport, sender] : senders_) sender->CancelUnstarted();
}

}  // namespace webhookd
