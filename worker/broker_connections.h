#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "worker/async_sender.h"
#include "worker/broker_session.h"

namespace webhookd {

// What the broker transports share (docs/brokers.md): a connection per destination URL,
// credentials and TLS settings (BrokerConnectionKey), each a BrokerSession with a thread
// of its own, and up to BrokerOptions::window messages in flight on it. A transport is
// this with its own session (worker/amqp_transport.h and the others).
//
// Threads: one per connection, made when its first message comes and joined by the
// destructor. It sends its messages in the order Start was called, reads the broker's
// answers and calls each `done`, so a slow or lost broker holds up only the destinations
// that name it. A message unanswered within the attempt timeout is expired
// (BrokerSession::Expire).
class BrokerConnections : public AsyncSender {
 public:
  using Options = BrokerOptions;
  using MakeSession =
      std::function<std::unique_ptr<BrokerSession>(const BrokerOptions&, Resolver&)>;

  BrokerConnections(Options options, MakeSession make_session);
  // Messages in flight keep the rest of their attempt; those not started end with
  // not_started.
  ~BrokerConnections() override;
  BrokerConnections(const BrokerConnections&) = delete;
  BrokerConnections& operator=(const BrokerConnections&) = delete;

  // AsyncSender:
  void Start(Outgoing request, Done done) override;
  void CancelUnstarted() override;

  // A connection and its thread; defined in the .cc.
  class Connection;

 private:
  Options options_;
  MakeSession make_session_;
  std::unique_ptr<Resolver> own_resolver_;
  Resolver* resolver_;
  std::mutex mu_;
  std::map<std::string, std::unique_ptr<Connection>> connections_;  // guarded by mu_
};

}  // namespace webhookd
