#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_set>
#include <vector>

#include "base/clock.h"
#include "worker/async_sender.h"
#include "worker/wakeable_epoll.h"

namespace webhookd {

// Sends over HTTP(S) with libcurl's multi interface: every attempt of the process runs on
// one thread with non-blocking sockets, and connections are kept alive per origin. curl
// resolves host names itself, each lookup on a thread of its own and inside the attempt's
// deadline, so a name whose DNS never answers costs its own attempt a timeout and holds
// up nothing else. Where a connection goes is decided in the socket-open callback, which
// sees every address curl is about to connect to and refuses a non-public one: DNS
// rebinding, a second resolution or a parser difference cannot reach a refused address.
// "localhost" and names under ".localhost" are refused before any lookup. No proxy from
// the environment is used, redirects are not followed, the whole attempt (DNS included)
// is bounded by the attempt timeout, and at most `max_response_read` bytes of an answer
// are read.
//
// Through an egress proxy, an attempt is two transfers on the same thread: a lookup, in
// which curl resolves the name (asynchronously, within the attempt's deadline) and the
// socket-open callback vets each address and records the first allowed one instead of
// connecting; then the request, tunnelled through the proxy with CONNECT to that address
// (CURLOPT_CONNECT_TO), so the proxy never resolves the name again, while the Host header,
// SNI and the certificate check use the URL's host. The proxy's own address is the
// operator's choice and is not vetted. A proxy that cannot be reached sets
// SendResult::proxy_unreachable (the receiver was never asked); one that answers the
// CONNECT with an error is an ordinary failed attempt.
//
// The transfer thread drives curl by events, so its work grows with the sockets that are
// ready and the timers that are due, not with the number of attempts in flight (thousands,
// each waiting on a slow receiver): curl tells it which sockets to watch and when its next
// timeout is, it waits on an epoll instance of its own for that, and hands curl each
// ready socket or the expired timer.
//
// Threads: one transfer thread, which runs every transfer, alone uses the multi handle
// and the epoll instance until the destructor has joined it, and calls every `done`;
// curl's resolver threads, one per lookup in progress, which it ends or abandons at the
// deadline. The callers' threads only queue sends (Start) or mark the queued ones
// cancelled (CancelUnstarted) under a mutex, then wake the transfer thread through the
// epoll instance's eventfd.
class CurlSender final : public Sender, public AsyncSender {
 public:
  struct Options {
    Duration connect_timeout = std::chrono::seconds(5);
    Duration attempt_timeout = std::chrono::seconds(15);
    bool allow_private = false;
    size_t max_response_read = 64 * 1024;  // read no further; the connection is then dropped
    int max_connections = 1024;            // idle connections kept for reuse
    // curl's "HOST:PORT:ADDRESS[,ADDRESS]" entries (CURLOPT_RESOLVE), answered instead of
    // DNS for those names: how tests script DNS. Empty in production.
    std::vector<std::string> resolve;
    // WEBHOOKD_EGRESS_PROXY ("http://host:port"): every attempt leaves through this HTTP
    // proxy as a CONNECT tunnel to the address webhookd vetted. Empty: direct.
    std::string proxy;
  };

  explicit CurlSender(Options options);
  // Ends transfers still running with an error; they are not waited for.
  ~CurlSender() override;
  CurlSender(const CurlSender&) = delete;
  CurlSender& operator=(const CurlSender&) = delete;

  // AsyncSender:
  void Start(Outgoing request, Done done) override;
  void CancelUnstarted() override;

  // Sender: Start, then wait for the result.
  SendResult Send(const Outgoing& request) override;

  // One attempt, defined in the .cc; named here so curl's C callbacks there can use it.
  struct Transfer;

 private:
  void Submit(std::unique_ptr<Transfer> t);
  void TransferLoop();
  // curl's CURLMOPT_SOCKETFUNCTION and CURLMOPT_TIMERFUNCTION (CURL and CURLM are void,
  // curl_socket_t is int): what to watch, and when to call it back for its timeouts.
  static int OnSocket(void* easy, int socket, int what, void* self, void* socketp);
  static int OnTimer(void* multi, long timeout_ms, void* self);
  // Hands curl what is due: `socket` ready with `events` (epoll's), or its timer.
  void Act(int socket, uint32_t events);
  void RunTimerIfDue();
  // Finishes every transfer curl reports done.
  void FinishDone();
  void Begin(std::unique_ptr<Transfer> t);
  // Sets the request's options on `easy`; false when the deadline has passed.
  bool Configure(Transfer& t, void* easy);
  void BeginLookup(std::unique_ptr<Transfer> t, void* easy);
  void Finish(Transfer* t, int code);
  // The lookup of `t` ended: its request starts, or it ends refused or failed.
  void FinishLookup(Transfer* t, int code);

  Options options_;
  void* resolve_list_;   // curl_slist* of options_.resolve
  void* multi_;          // CURLM*, transfer thread only
  WakeableEpoll epoll_;  // the sockets curl asks for; Wake from any thread
  // When curl wants CURL_SOCKET_TIMEOUT; none: it has no timeout. Transfer thread only.
  std::optional<std::chrono::steady_clock::time_point> timer_;

  std::mutex mu_;
  std::vector<std::unique_ptr<Transfer>> submitted_;  // guarded by mu_
  bool stop_ = false;                                 // guarded by mu_

  std::vector<void*> idle_handles_;        // CURL*, transfer thread only
  std::unordered_set<Transfer*> running_;  // in the multi handle; transfer thread only
  std::thread transfer_thread_;
};

}  // namespace webhookd
