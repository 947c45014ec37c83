#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/result.h"
#include "core/event.h"
#include "store/pg/pg_pool.h"

namespace webhookd::pg {

// Group commit for ingest without an idempotency key or a target destination: the
// requests that queue while a commit runs share the next transaction, one statement and
// one fsync, and each caller gets its answer only after that commit.
//
// Threads: `committers` threads, started on the first ingest, each owning one connection
// of its own pool. Insert blocks its caller until the group's commit is resolved; Submit
// returns at once and the committer that resolves the group calls `done` (so `done` must
// not block: it holds up every later group of that committer). The destructor lets the
// committers finish what is queued, calling every `done`, then joins them.
class GroupCommitter {
 public:
  using Done = std::function<void(Result<IngestReceipt>)>;

  // `statement_timeout` bounds each group's statement (zero: none): an ingest is a
  // request too.
  GroupCommitter(const std::string& url, int committers,
                 std::chrono::milliseconds statement_timeout = std::chrono::milliseconds::zero());
  ~GroupCommitter();
  GroupCommitter(const GroupCommitter&) = delete;
  GroupCommitter& operator=(const GroupCommitter&) = delete;

  // Thread-safe; blocks until the event's group has committed or failed.
  Result<IngestReceipt> Insert(const NewEvent& event);
  // Thread-safe; `done` is called exactly once, on a committer thread, or here at once
  // when the committer is shutting down.
  void Submit(NewEvent event, Done done);

 private:
  struct Pending;
  void Enqueue(std::unique_ptr<Pending> pending);
  void CommitLoop();
  void CommitGroup(std::vector<Pending*>& group);

  PgPool pool_;
  int committers_count_;
  std::once_flag started_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Pending*> queue_;  // guarded by mu_
  bool stop_ = false;           // guarded by mu_
  std::vector<std::thread> committers_;
};

}  // namespace webhookd::pg
