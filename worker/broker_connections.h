#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "worker/async_sender.h"
#include "worker/broker_session.h"

namespace webhookd {

// What the broker transports share (docs/brokers.md): a connection per tenant, destination
// URL, credentials and TLS settings (BrokerConnectionKey), each a BrokerSession with a
// thread of its own, and up to BrokerOptions::window messages in flight on it. A
// transport is this with its own session (worker/amqp_transport.h and the others).
//
// Threads: one per connection, made when its first message comes, and one that closes
// connections (the closer). A connection thread sends its messages in the order Start was
// called, reads the broker's answers and calls each `done`, so a slow or lost broker holds
// up only the destinations that name it. A message unanswered within the attempt timeout
// is expired (BrokerSession::Expire). The session may make threads of its own (libnats's,
// librdkafka's); they end with it, on the connection's thread.
//
// What a connection holds is given back: a connection with nothing to send for
// BrokerOptions::idle_timeout, or whose every destination has gone to another key (its
// URL or credentials changed), is closed: it sends what it was given, then its thread
// ends, and the closer joins it. Connections open at once are bounded by
// BrokerOptions::limits, in all and per tenant, those being closed included; a message
// that would need one more is not sent and ends, on the closer's thread, with
// SendResult::at_capacity (and a connection of the tenant that has nothing to send is
// closed to make room for the next try).
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

  // Closes every connection that has had nothing to send for the idle timeout; the closer
  // does this every second on its own.
  void CloseIdle();

  // Connections of this transport open now, those being closed included.
  int open();

  // A connection and its thread; defined in the .cc.
  class Connection;

 private:
  struct Entry {
    std::unique_ptr<Connection> connection;
    std::string tenant;
    Timestamp last_used;
    std::set<int64_t> destinations;  // those whose last message went over it
  };
  struct Closing {
    std::unique_ptr<Connection> connection;
    std::string tenant;
  };

  // Moves the connection of `key` to closing_. Holds mu_.
  void CloseLocked(std::map<std::string, Entry>::iterator it);
  // Closes one of `tenant`'s connections (any tenant's if empty) that has nothing to send,
  // the least lately used. Holds mu_.
  bool CloseOneIdleLocked(const std::string* tenant);
  void CloseIdleLocked(Timestamp now);
  void Closer();
  // A connection's thread is ending: the closer may join it.
  void EndedOne();

  Options options_;
  MakeSession make_session_;
  std::unique_ptr<Resolver> own_resolver_;
  Resolver* resolver_;
  SystemClock system_clock_;
  Clock* clock_;
  std::mutex mu_;
  std::condition_variable closer_cv_;
  std::map<std::string, Entry> connections_;          // guarded by mu_
  std::map<int64_t, std::string> destination_key_;    // guarded by mu_; the key of each one's last
  std::vector<Closing> closing_;                      // guarded by mu_
  std::vector<std::pair<Done, SendResult>> refused_;  // guarded by mu_; answered by the closer
  int joining_ = 0;        // guarded by mu_; taken from closing_, not yet joined and released
  bool stopping_ = false;  // guarded by mu_
  std::thread closer_;     // last: it starts with everything above
};

}  // namespace webhookd
