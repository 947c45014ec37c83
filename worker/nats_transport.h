#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "base/clock.h"
#include "net/resolver.h"
#include "worker/async_sender.h"

namespace webhookd {

// Delivers to NATS JetStream (docs/brokers.md): each message is published to
// broker.subject (default "webhooks.<type>", the type being the body's top-level "type")
// with the body as its payload, every header as a NATS header, and Nats-Msg-Id set to the
// webhook-id, so that JetStream stores a resend within its duplicate window only once. The
// stream's PubAck is the success (its stream and sequence become the result's body).
// Anything else (no connection, refused credentials, no stream for the subject, an error
// from JetStream, no PubAck within the attempt timeout) is an error with the broker's own
// words, so the attempt is retryable.
//
// One connection per destination URL and credentials, made on its first message after
// the host passed the private-address rule, and made again after a failure no sooner
// than a backoff (from 100 ms, doubling to 5 s) allows: messages meanwhile fail at once
// with the failure that began it. broker.username and broker.password are the user and
// password; a password alone is a token. libnats's own reconnecting is turned off so that this
// backoff is the only one. tls:// is TLS checked against the system's CAs and the URL's
// host name (though the connection is to a vetted address); nats:// is plain TCP, unless
// the server requires TLS: libnats then upgrades by itself, checking the CAs but not the
// name. libnats 3.4.1 does the TLS handshake on a blocking socket with no deadline, so
// the connect runs on a thread of its own that the connection waits for no longer than
// the attempt timeout (and a second): a server that stalls mid-handshake then costs one
// abandoned thread until it hangs up, and holds up nothing else.
//
// Threads: one per connection, made when its first message comes and joined by the
// destructor. Each sends its messages one at a time in the order Start was called, so a
// slow or lost server holds up only the destinations that name it. Each connect runs on a
// detached thread of its own (see above), one at most per connection. libnats adds threads
// of its own: per connection a reader and a flusher, which natsConnection_Destroy joins
// (each connection is destroyed by its thread before it ends, so none outlives the
// transport); and, once per process, its timer and callback threads, which live until
// the process ends (nats_Close is never called: other users of libnats may remain). The
// publish is a plain request on a subscription read with NextMsg, rather than
// js_PublishMsg, whose reply subscription has a delivery thread that libnats detaches
// instead of joining.
class NatsTransport final : public AsyncSender {
 public:
  struct Options {
    Duration attempt_timeout = std::chrono::seconds(15);
    bool allow_private = false;
    Resolver* resolver = nullptr;  // null: a SystemResolver of its own
  };

  explicit NatsTransport(Options options);
  // Sends in progress finish; those not started end with not_started.
  ~NatsTransport() override;
  NatsTransport(const NatsTransport&) = delete;
  NatsTransport& operator=(const NatsTransport&) = delete;

  // AsyncSender:
  void Start(Outgoing request, Done done) override;
  void CancelUnstarted() override;

  // A connection and its thread; defined in the .cc.
  struct Connection;

 private:
  Options options_;
  std::unique_ptr<Resolver> own_resolver_;
  Resolver* resolver_;
  std::mutex mu_;
  std::map<std::string, std::unique_ptr<Connection>> connections_;  // guarded by mu_
};

}  // namespace webhookd
