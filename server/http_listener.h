#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "base/result.h"
#include "server/http_request.h"
#include "server/problem.h"

namespace webhookd {

// What the listener asks of the code that answers. A request goes through at most three
// calls, and the body is read only after Admit let it in, so a client without a key
// never gets a byte of its body buffered.
class HttpHandler {
 public:
  virtual ~HttpHandler() = default;
  // On a listener thread, right after the head: an answer that needs neither the body
  // nor a blocking call (/healthz, static files), or nullopt. Must not block.
  virtual std::optional<Reply> Immediate(HttpRequest& head) = 0;
  // On a handler thread, before any byte of the body is read: an answer that ends the
  // exchange (401, 403, 404, 405, 415, or the whole answer of a bodiless route), or
  // nullopt to read the body and call Handle. May fill `head.context`.
  virtual std::optional<Reply> Admit(HttpRequest& head) = 0;
  // On a handler thread, with the whole request.
  virtual Reply Handle(HttpRequest& request) = 0;
  // The answer to a request Begin took: a reply, or nullopt to send the request through
  // Admit and Handle after all.
  using Later = std::function<void(std::optional<Reply>)>;
  // On a begin thread (never a socket thread), with the whole request, before Admit: true
  // when the handler took the request and will call `later` exactly once, from any
  // thread; false to send it through Admit and Handle. For a request answered without
  // waiting on anything (ingest, whose store commits on threads of its own). It may spend
  // CPU (parse, validate against a schema) but must not block on I/O, and must not throw.
  virtual bool Begin(const HttpRequest& request, Later later) {
    (void)request;
    (void)later;
    return false;
  }
  // On a handler thread, after Admit and before Handle: true when the handler took the
  // admitted request to answer once something happens (a feed read's long poll), holding
  // no handler thread while it waits; it calls `later` exactly once, from any thread,
  // with the answer, or with nullopt to be offered the request again on a handler thread
  // (HandleLater, then Handle). False: Handle answers now. Must not throw.
  virtual bool HandleLater(HttpRequest& request, Later later) {
    (void)request;
    (void)later;
    return false;
  }
  // The answer to a request the listener refused itself: 400 (not HTTP), 413 (body over
  // the limit), 431 (header section over its limits).
  virtual Reply Refused(int status) = 0;
};

// The HTTP/1.1 listener of the API and operations ports (Boost.Beast over Asio).
//
// Threads: `io_threads` accept and run every socket's reads and writes asynchronously,
// so an idle or slow client costs a socket and a few KiB, never a thread; they run
// nothing of the handler but Immediate. `handler_threads` run Admit and Handle (which
// may wait on the database). A request reaches a handler thread only once its whole head
// has arrived, and its body is read only once it was admitted. A request whose body came
// with its head is first offered to Begin on one of `begin_threads`: what Begin takes is
// answered from whichever thread calls `later` (the answer is posted to the connection's
// strand) and holds no handler thread while it waits; so does what HandleLater takes
// after a handler thread admitted it. So neither a slow validation nor
// a slow database ever delays the reading of other requests or /healthz.
//
// Limits, each enforced while reading: the header section at most `max_header_bytes`
// and `max_header_fields` (431), the body at most `max_body_bytes` whether sent with a
// length or chunked (413); the whole request within `request_deadline` of its first byte
// and an idle keep-alive connection at most `idle_timeout` (then the connection is
// closed); at most `max_connections` open at once (the rest wait in the kernel's
// backlog, and accepting pauses until one closes: no spinning on a descriptor limit);
// at most `max_connections_per_client` open at once from one client (ClientOf its
// address), and one more is closed as soon as it is accepted, without an answer.
class HttpListener {
 public:
  struct Options {
    size_t max_body_bytes = 262144;
    size_t max_header_bytes = 64 * size_t{1024};
    int max_header_fields = 100;
    std::chrono::milliseconds request_deadline{10000};
    std::chrono::milliseconds idle_timeout{5000};
    std::chrono::milliseconds write_timeout{10000};
    int handler_threads = 128;
    int io_threads = 2;
    int begin_threads = 2;
    int max_connections = 10000;
    int max_connections_per_client = 256;
  };

  // Borrows `handler`.
  HttpListener(HttpHandler& handler, Options options);
  ~HttpListener();
  HttpListener(const HttpListener&) = delete;
  HttpListener& operator=(const HttpListener&) = delete;

  // Binds and listens on host:port (port 0 picks one); returns the bound port.
  Result<int> Bind(const std::string& host, int port);
  // Serves until Stop() and until every connection has finished its request.
  void Run();
  // Closes the listener and idle connections; requests in progress finish. Thread-safe.
  void Stop();

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace webhookd
