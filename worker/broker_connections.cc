#include "worker/broker_connections.h"

#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <thread>
#include <vector>

namespace webhookd {

namespace {

// How long the thread reads answers before it looks for new messages again, while
// there is room in the window: a message that comes meanwhile waits no longer.
constexpr auto kAwaitSlice = std::chrono::milliseconds(20);

// How often the closer looks for idle connections, and for the end of those it closes.
constexpr auto kSweepEvery = std::chrono::seconds(1);
constexpr auto kClosingPoll = std::chrono::milliseconds(20);

// Each tenant's share of the resolver's lookups, as for destination URLs (server/api.h).
constexpr int kLookupsPerTenant = 8;

SendResult NotStarted() {
  SendResult r;
  r.not_started = true;
  r.error = "not started";
  return r;
}

}  // namespace

class BrokerConnections::Connection {
 public:
  Connection(const Options& options, const MakeSession& make_session, Resolver& resolver,
             std::string tenant, std::function<void()> on_end)
      : options_(options),
        on_end_(std::move(on_end)),
        resolver_(resolver, options.lookups, std::move(tenant)),
        session_(make_session(options, resolver_)),
        thread_([this] { Run(); }) {}

  // A connection not closed by Close ends what is queued with not_started.
  ~Connection() {
    {
      std::lock_guard lock(mu_);
      if (!stop_) {
        stop_ = true;
        for (Job& job : jobs_) job.cancelled = true;
      }
    }
    cv_.notify_all();
    thread_.join();
  }

  // Sends what it was given, then its thread ends (Ended).
  void Close() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
  }

  bool Ended() const { return ended_.load(); }
  // Nothing queued or in flight; only Push (under BrokerConnections' lock) adds to it.
  bool Idle() const { return pending_.load() == 0; }

  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  void Push(Outgoing request, Done done) {
    pending_.fetch_add(1);
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
    ended_.store(true);
    on_end_();
  }

  void Loop() {
    const auto window = static_cast<size_t>(std::max(options_.window, 1));
    for (;;) {
      bool held = false;
      while (in_flight_.size() < window) {
        std::optional<Job> job = Take();
        if (!job) break;
        if (job->cancelled) {
          pending_.fetch_sub(1);
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
      pending_.fetch_sub(1);
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
      pending_.fetch_sub(1);
      done(std::move(answer.result));
    }
    answers_.clear();
  }

  const Options& options_;
  std::function<void()> on_end_;  // tells the closer the thread is about to end
  TenantResolver resolver_;
  std::unique_ptr<BrokerSession> session_;
  std::atomic<int> pending_{0};  // messages pushed whose `done` has not been called
  std::atomic<bool> ended_{false};
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
    : options_(std::move(options)), make_session_(std::move(make_session)) {
  if (options_.resolver == nullptr) {
    own_resolver_ = std::make_unique<SystemResolver>(options_.attempt_timeout);
    resolver_ = own_resolver_.get();
  } else {
    resolver_ = options_.resolver;
  }
  if (!options_.limits) options_.limits = std::make_shared<BrokerLimits>();
  if (!options_.lookups) options_.lookups = std::make_shared<LookupShares>(kLookupsPerTenant);
  clock_ = options_.clock != nullptr ? options_.clock : &system_clock_;
  closer_ = std::thread([this] { Closer(); });
}

BrokerConnections::~BrokerConnections() {
  std::map<std::string, Entry> connections;
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    connections.swap(connections_);
  }
  // Each joins its thread; outside the lock, as a send's `done` may call Start.
  for (auto& [key, entry] : connections) {
    entry.connection.reset();
    options_.limits->Release(entry.tenant);
  }
  closer_cv_.notify_all();
  closer_.join();
}

void BrokerConnections::Start(Outgoing request, Done done) {
  const std::string key = request.tenant + '\n' + BrokerConnectionKey(request);
  std::lock_guard lock(mu_);
  if (stopping_) {
    refused_.emplace_back(std::move(done), NotStarted());
    closer_cv_.notify_all();
    return;
  }
  const Timestamp now = clock_->Now();
  const int64_t destination = request.destination_id;
  if (auto known = destination_key_.find(destination);
      known != destination_key_.end() && known->second != key) {
    // The destination's URL or credentials changed: the connection it used is closed once
    // no destination uses it.
    if (auto old = connections_.find(known->second); old != connections_.end()) {
      old->second.destinations.erase(destination);
      if (old->second.destinations.empty()) CloseLocked(old);
    }
    destination_key_.erase(destination);
  }
  auto it = connections_.find(key);
  if (it == connections_.end()) {
    if (auto full = options_.limits->Take(request.tenant)) {
      // Room for the next try, if a connection has nothing to send.
      if (!CloseOneIdleLocked(&request.tenant) && !full->tenant) CloseOneIdleLocked(nullptr);
      SendResult r = BrokerFailure(std::move(full->error));
      r.at_capacity = true;
      refused_.emplace_back(std::move(done), std::move(r));
      closer_cv_.notify_all();
      return;
    }
    Entry entry;
    entry.connection = std::make_unique<Connection>(options_, make_session_, *resolver_,
                                                    request.tenant, [this] { EndedOne(); });
    entry.tenant = request.tenant;
    it = connections_.emplace(key, std::move(entry)).first;
  }
  it->second.last_used = now;
  if (destination != 0) {
    it->second.destinations.insert(destination);
    destination_key_[destination] = key;
  }
  it->second.connection->Push(std::move(request), std::move(done));
}

void BrokerConnections::CancelUnstarted() {
  std::lock_guard lock(mu_);
  for (auto& [key, entry] : connections_) entry.connection->CancelUnstarted();
  for (Closing& closing : closing_) closing.connection->CancelUnstarted();
}

void BrokerConnections::EndedOne() {
  std::lock_guard lock(mu_);
  closer_cv_.notify_all();
}

void BrokerConnections::CloseIdle() {
  std::lock_guard lock(mu_);
  CloseIdleLocked(clock_->Now());
}

int BrokerConnections::open() {
  std::lock_guard lock(mu_);
  return static_cast<int>(connections_.size() + closing_.size()) + joining_;
}

void BrokerConnections::CloseLocked(std::map<std::string, Entry>::iterator it) {
  for (int64_t destination : it->second.destinations) {
    auto known = destination_key_.find(destination);
    if (known != destination_key_.end() && known->second == it->first)
      destination_key_.erase(known);
  }
  it->second.connection->Close();
  closing_.push_back(Closing{std::move(it->second.connection), std::move(it->second.tenant)});
  connections_.erase(it);
  closer_cv_.notify_all();
}

bool BrokerConnections::CloseOneIdleLocked(const std::string* tenant) {
  auto oldest = connections_.end();
  for (auto it = connections_.begin(); it != connections_.end(); ++it) {
    if (tenant != nullptr && it->second.tenant != *tenant) continue;
    if (!it->second.connection->Idle()) continue;
    if (oldest == connections_.end() || it->second.last_used < oldest->second.last_used)
      oldest = it;
  }
  if (oldest == connections_.end()) return false;
  CloseLocked(oldest);
  return true;
}

void BrokerConnections::CloseIdleLocked(Timestamp now) {
  for (auto it = connections_.begin(); it != connections_.end();) {
    auto next = std::next(it);
    if (it->second.connection->Idle() && now - it->second.last_used >= options_.idle_timeout) {
      CloseLocked(it);
    }
    it = next;
  }
}

void BrokerConnections::Closer() {
  std::unique_lock lock(mu_);
  auto next_sweep = std::chrono::steady_clock::now() + kSweepEvery;
  for (;;) {
    // A connection being closed is looked at often: until joined it counts as open.
    const auto wake = closing_.empty()
                          ? next_sweep
                          : std::min(next_sweep, std::chrono::steady_clock::now() + kClosingPoll);
    closer_cv_.wait_until(lock, wake, [&] {
      return !refused_.empty() || (stopping_ && closing_.empty()) ||
             std::any_of(closing_.begin(), closing_.end(),
                         [](const Closing& c) { return c.connection->Ended(); });
    });
    if (!stopping_ && std::chrono::steady_clock::now() >= next_sweep) {
      CloseIdleLocked(clock_->Now());
      next_sweep = std::chrono::steady_clock::now() + kSweepEvery;
    }
    std::vector<std::pair<Done, SendResult>> refused;
    refused.swap(refused_);
    std::vector<Closing> ended;
    for (auto it = closing_.begin(); it != closing_.end();) {
      if (it->connection->Ended()) {
        ended.push_back(std::move(*it));
        it = closing_.erase(it);
      } else {
        ++it;
      }
    }
    if (stopping_ && closing_.empty() && refused.empty() && ended.empty()) return;
    joining_ += static_cast<int>(ended.size());
    lock.unlock();
    // Outside the lock: a `done` may call Start.
    for (auto& [done, result] : refused) done(std::move(result));
    for (Closing& closing : ended) closing.connection.reset();  // its thread has ended
    lock.lock();
    // Released under mu_, in the one step that stops counting them: a Start between the
    // two would make a connection that open() counts beside the ones it replaces.
    joining_ -= static_cast<int>(ended.size());
    for (Closing& closing : ended) options_.limits->Release(closing.tenant);
  }
}

}  // namespace webhookd
