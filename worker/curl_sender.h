#pragma once

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_set>
#include <vector>

#include "base/clock.h"
#include "net/resolver.h"
#include "worker/async_sender.h"

namespace webhookd {

// Sends over HTTP(S) with libcurl's multi interface: every attempt of the process runs on
// one thread with non-blocking sockets, and connections are kept alive per origin and
// vetted address. The host is resolved and vetted before the attempt starts and curl is
// made to connect to the vetted address alone (CURLOPT_CONNECT_TO); the socket-open
// callback checks the address actually connected to once more, so neither DNS rebinding
// nor a parser difference can reach a refused address. No proxy from the environment is
// used, redirects are not followed, the whole attempt is bounded by the attempt timeout,
// and at most `max_response_read` bytes of an answer are read.
//
// Threads: one transfer thread, which runs every transfer and calls every `done`; and
// `resolvers` threads for hosts that are names (a literal address is vetted in Start), so
// a slow DNS answer holds up no other destination.
class CurlSender final : public Sender, public AsyncSender {
 public:
  struct Options {
    Duration connect_timeout = std::chrono::seconds(5);
    Duration attempt_timeout = std::chrono::seconds(15);
    bool allow_private = false;
    size_t max_response_read = 64 * 1024;  // read no further; the connection is then dropped
    int max_connections = 1024;            // idle connections kept for reuse
    int resolvers = 4;
  };

  // Borrows `resolver`, which must outlive the sender.
  CurlSender(Resolver& resolver, Options options);
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
  void Vet(Transfer& t);
  void Submit(std::unique_ptr<Transfer> t);
  void ResolveLoop();
  void TransferLoop();
  void Begin(std::unique_ptr<Transfer> t);
  void Finish(Transfer* t, int code);

  Resolver& resolver_;
  Options options_;
  void* multi_;  // CURLM*, used by the transfer thread alone (and curl_multi_wakeup)

  std::mutex mu_;
  std::condition_variable resolve_cv_;
  std::deque<std::unique_ptr<Transfer>> to_resolve_;  // guarded by mu_
  std::vector<std::unique_ptr<Transfer>> submitted_;  // guarded by mu_
  bool stop_ = false;                                 // guarded by mu_

  std::vector<void*> idle_handles_;        // CURL*, transfer thread only
  std::unordered_set<Transfer*> running_;  // in the multi handle; transfer thread only
  std::thread transfer_thread_;
  std::vector<std::thread> resolver_threads_;
};

}  // namespace webhookd
