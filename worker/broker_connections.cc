#include "worker/broker_connections.h"

#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <thread>
#include <vector>

namespace webhookd {

namespace {

// How long the thread reads answers before it looks for new messages again, while
// there is room in the window: a message that comes meanwhile waits no longer.
constexpr auto kAwaitSlice = std::chrono::milliseconds(20);

SendResult NotStarted() {
  SendResult r;
  r.not_started = true;
  r.error = "not started";
  return r;
}

}  // namespace

class BrokerConnections::Connection {
 public:
  Connection(const Options& options, const MakeSession& make_session, Resolver& resolver)
      : options_(options), session_(make_session(options, resolver)), thread_([this] { Run(); }) {}

  ~Connection() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
      for (Job& job : jobs_) job.cancelled = true;
    }
    cv_.notify_all();
    thread_.join();
  }

  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  void Push(Outgoing request, Done done) {
    {
      std::lock_guard lock(mu_);
      jobs_.push_back(Job{std::move(request), std::move(done)});
    }
    cv_.notify_one();
  }

  void CancelUnstarted() {
    std::lock_guard lock(mu_);
    for (Job& job : jobs_) job.cancelled = true;
    cv_.notify_all();
  }

 private:
  struct Job {
    Outgoing request;
    Done done;
    bool cancelled = false;
  };

  struct InFlight {
    Done done;
    std::chrono::steady_clock::time_point deadline;
  };

  // The next message, waiting for one only when nothing is in flight; nullopt when there
  // is none (or the connection stops).
  std::optional<Job> Take() {
    std::unique_lock lock(mu_);
    if (in_flight_.empty()) cv_.wait(lock, [&] { return !jobs_.empty() || stop_; });
    if (jobs_.empty()) return std::nullopt;
    Job job = std::move(jobs_.front());
    jobs_.pop_front();
    return job;
  }

  // A message that may not be sent yet goes back to the front of the line.
  void PutBack(Job job) {
    std::lock_guard lock(mu_);
    jobs_.push_front(std::move(job));
  }

  bool Stopping() {
    std::lock_guard lock(mu_);
    return stop_;
  }

  // The session is made on the caller's thread but connects, is used and is destroyed on
  // this one (libnats wants a connection's own threads joined by the thread that used it).
  void Run() {
    // A write to a connection the broker has reset raises SIGPIPE, whose default ends the
    // process: hiredis writes without MSG_NOSIGNAL, and pipelined writes meet a reset
    // peer. Blocked here, it stays pending on this thread (and the threads it makes, which
    // inherit the mask) and the write fails with EPIPE, a lost connection like any other.
    sigset_t pipe;
    sigemptyset(&pipe);
    sigaddset(&pipe, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe, nullptr);
    Loop();
    session_.reset();
  }

  void Loop() {
    const auto window = static_cast<size_t>(std::max(options_.window, 1));
    for (;;) {
      bool held = false;
      while (in_flight_.size() < window) {
        std::optional<Job> job = Take();
        if (!job) break;
        if (job->cancelled) {
          job->done(NotStarted());
          continue;
        }
        if (!in_flight_.empty() && !session_->Joins(job->request)) {
          PutBack(std::move(*job));
          held = true;
          break;
        }
        const Ticket ticket = ++tickets_;
        in_flight_.emplace(ticket, InFlight{std::move(job->done), std::chrono::steady_clock::now() +
                                                                      options_.attempt_timeout});
        session_->Begin(job->request, ticket, answers_);
        Deliver();
      }
      if (in_flight_.empty()) {
        if (Stopping()) return;  // Take found nothing left, cancelled or not
        continue;
      }
      // Every message has the same timeout, so the oldest expires first.
      const auto deadline = in_flight_.begin()->second.deadline;
      const bool room = !held && in_flight_.size() < window;
      session_->Await(
          room ? std::min(deadline, std::chrono::steady_clock::now() + kAwaitSlice) : deadline,
          answers_);
      Deliver();
      Expire();
    }
  }

  void Expire() {
    const auto now = std::chrono::steady_clock::now();
    std::vector<Ticket> expired;
    for (const auto& [ticket, flight] : in_flight_) {
      if (flight.deadline > now) break;
      expired.push_back(ticket);
    }
    if (expired.empty()) return;
    session_->Expire(expired, answers_);
    Deliver();
    for (Ticket ticket : expired) {
      auto it = in_flight_.find(ticket);
      if (it == in_flight_.end()) continue;
      Done done = std::move(it->second.done);
      in_flight_.erase(it);
      SendResult r = BrokerFailure("no answer from the broker within the attempt timeout");
      r.timed_out = true;
      done(std::move(r));
    }
  }

  // Calls `done` for each answer of a message in flight, outside any lock (a `done` may
  // call Start).
  void Deliver() {
    for (Answer& answer : answers_) {
      auto it = in_flight_.find(answer.ticket);
      if (it == in_flight_.end()) continue;  // answered already, or expired
      Done done = std::move(it->second.done);
      in_flight_.erase(it);
      done(std::move(answer.result));
    }
    answers_.clear();
  }

  const Options& options_;
  std::unique_ptr<BrokerSession> session_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Job> jobs_;  // guarded by mu_
  bool stop_ = false;     // guarded by mu_
  // The connection thread's own.
  std::map<Ticket, InFlight> in_flight_;  // ordered by ticket, so by deadline too
  Answers answers_;
  Ticket tickets_ = 0;
  std::thread thread_;  // last: it starts with everything above made
};

BrokerConnections::BrokerConnections(Options options, MakeSession make_session)
    : options_(options), make_session_(std::move(make_session)) {
  if (options_.resolver == nullptr) {
    own_resolver_ = std::make_unique<SystemResolver>(options_.attempt_timeout);
    resolver_ = own_resolver_.get();
  } else {
    resolver_ = options_.resolver;
  }
}

BrokerConnections::~BrokerConnections() {
  std::map<std::string, std::unique_ptr<Connection>> connections;
  {
    std::lock_guard lock(mu_);
    connections.swap(connections_);
  }
  // Each joins its thread; outside the lock, as a send's `done` may call Start.
  connections.clear();
}

void BrokerConnections::Start(Outgoing request, Done done) {
  std::lock_guard lock(mu_);
  auto& connection = connections_[BrokerConnectionKey(request)];
  if (!connection) connection = std::make_unique<Connection>(options_, make_session_, *resolver_);
  connection->Push(std::move(request), std::move(done));
}

void BrokerConnections::CancelUnstarted() {
  std::lock_guard lock(mu_);
  for (auto& [key, connection] : connections_) connection->CancelUnstarted();
}

}  // namespace webhookd
