#pragma once

#include <condition_variable>
#include <deque>
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
// Threads: `committers` threads, started on the first Insert, each owning one connection
// of its own pool; callers block in Insert until their group's commit is resolved.
class GroupCommitter {
 public:
  GroupCommitter(const std::string& url, int committers);
  ~GroupCommitter();
  GroupCommitter(const GroupCommitter&) = delete;
  GroupCommitter& operator=(const GroupCommitter&) = delete;

  // Thread-safe; blocks until the event's group has committed or failed.
  Result<IngestReceipt> Insert(const NewEvent& event);

 private:
  struct Pending;
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
