#pragma once

#include "worker/broker_connections.h"

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
// One connection per destination URL and credentials (worker/broker_connections.h), made
// on its first message after the host passed the private-address rule, and made again
// after a failure no sooner than a backoff allows. broker.username and broker.password
// are the user and password; a password alone is a token. libnats's own reconnecting is
// turned off so that this backoff is the only one. tls:// is TLS checked against the
// system's CAs and the URL's host name (though the connection is to a vetted address);
// nats:// is plain TCP, unless the server requires TLS: libnats then upgrades by itself,
// checking the CAs but not the name. libnats 3.4.1 does the TLS handshake on a blocking
// socket with no deadline, so the connect runs on a thread of its own that the connection
// waits for no longer than the attempt timeout (and a second): a server that stalls
// mid-handshake then costs one abandoned thread until it hangs up, and holds up nothing
// else.
//
// Up to a window of requests are in flight on a connection, each with a reply subject of
// its own under the connection's inbox, as long as they share one subject (a "no
// responders" answer names no request).
//
// Threads: besides the connection's own (worker/broker_connections.h), each connect runs
// on a detached thread (see above), one at most per connection. Once the process
// begins to exit, such a thread frees nothing more: OpenSSL's exit handler (registered
// when libssl loads) frees its locks, and a TLS context freed after it crashed. libnats adds
// threads of its own: per connection a reader and a flusher, which natsConnection_Destroy joins
// (each connection is destroyed by its thread before it ends, so none outlives the
// transport); and, once per process, its timer and callback threads, which live until
// the process ends (nats_Close is never called: other users of libnats may remain). The
// publish is a plain request on a subscription read with NextMsg, rather than
// js_PublishMsg, whose reply subscription has a delivery thread that libnats detaches
// instead of joining.
class NatsTransport final : public BrokerConnections {
 public:
  explicit NatsTransport(Options options);

  // Connects abandoned at their deadline whose threads still wait on a server, in the
  // whole process: a test waits for them to end before the process does.
  static int AbandonedConnects();
};

}  // namespace webhookd
