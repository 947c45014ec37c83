#include "worker/transport_router.h"

#include "base/strings.h"

namespace webhookd {

void TransportRouter::Start(Outgoing request, Done done) {
  AsyncSender* sender = &http_;
  if (const size_t colon = request.url.find(':'); colon != std::string::npos) {
    const auto transport = TransportOfScheme(Lower(std::string_view(request.url).substr(0, colon)));
    if (transport) {
      if (auto it = senders_.find(*transport); it != senders_.end()) sender = it->second;
    }
  }
  sender->Start(std::move(request), std::move(done));
}

void TransportRouter::CancelUnstarted() {
  http_.CancelUnstarted();
  for (auto& [transport, sender] : senders_) sender->CancelUnstarted();
}

}  // namespace webhookd
