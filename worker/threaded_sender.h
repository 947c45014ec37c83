#pragma once

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "worker/async_sender.h"

namespace webhookd {

// Runs a blocking Sender on a fixed pool of threads, one send per thread at a time, so
// anything that only knows how to Send can stand behind the dispatcher (the tests' fake
// senders do).
//
// Threads: `threads` sender threads, made by the constructor and joined by the
// destructor; each calls `sender.Send` and then the send's `done`.
class ThreadedSender final : public AsyncSender {
 public:
  // Borrows `sender`, which must outlive this object.
  ThreadedSender(Sender& sender, int threads);
  // Waits for the sends in progress; those not started end with not_started.
  ~ThreadedSender() override;
  ThreadedSender(const ThreadedSender&) = delete;
  ThreadedSender& operator=(const ThreadedSender&) = delete;

  // AsyncSender:
  void Start(Outgoing request, Done done) override;
  void CancelUnstarted() override;

 private:
  struct Job {
    Outgoing request;
    Done done;
    bool cancelled = false;
  };

  void Loop();

  Sender& sender_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Job> jobs_;  // guarded by mu_
  bool stop_ = false;     // guarded by mu_
  std::vector<std::thread> threads_;
};

}  // namespace webhookd
