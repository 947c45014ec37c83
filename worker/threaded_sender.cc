#include "worker/threaded_sender.h"

#include <algorithm>

namespace webhookd {

ThreadedSender::ThreadedSender(Sender& sender, int threads) : sender_(sender) {
  for (int i = 0; i < std::max(1, threads); ++i) threads_.emplace_back([this] { Loop(); });
}

ThreadedSender::~ThreadedSender() {
  CancelUnstarted();
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  for (auto& t : threads_) t.join();
}

void ThreadedSender::Start(Outgoing request, Done done) {
  {
    std::lock_guard lock(mu_);
    jobs_.push_back(Job{std::move(request), std::move(done)});
  }
  cv_.notify_one();
}

void ThreadedSender::CancelUnstarted() {
  // Marked, not answered here: `done` runs on the pool's threads, never on the caller's.
  std::lock_guard lock(mu_);
  for (Job& job : jobs_) job.cancelled = true;
  cv_.notify_all();
}

void ThreadedSender::Loop() {
  for (;;) {
    Job job;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return !jobs_.empty() || stop_; });
      if (jobs_.empty()) return;
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    SendResult result;
    if (job.cancelled) {
      result.not_started = true;
      result.error = "not started";
    } else {
      result = sender_.Send(job.request);
    }
    job.done(std::move(result));
  }
}

}  // namespace webhookd
