#include "store/pg/committer.h"

#include "base/encoding.h"
#include "store/pg/errors.h"
#include "store/pg/exec.h"
#include "store/pg/locks.h"
#include "store/pg/rows.h"
#include "store/pg/statements.h"

namespace webhookd::pg {

struct GroupCommitter::Pending {
  NewEvent owned;         // Submit's event; Insert's stays with its caller
  const NewEvent* event;  // the one to write
  Done done;
};

GroupCommitter::GroupCommitter(const std::string& url, int committers,
                               std::chrono::milliseconds statement_timeout)
    : pool_(url, std::max(1, committers), Plans::kGeneric, std::chrono::milliseconds::zero(),
            statement_timeout),
      committers_count_(std::max(1, committers)) {}

GroupCommitter::~GroupCommitter() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  for (auto& t : committers_) t.join();
}

Result<IngestReceipt> GroupCommitter::Insert(const NewEvent& event) {
  struct Waiter {
    std::mutex mu;
    std::condition_variable resolved;
    std::optional<Result<IngestReceipt>> result;
  } waiter;
  auto pending = std::make_unique<Pending>();
  pending->event = &event;
  // The waiter may return, and its frame go, as soon as it sees a result: the result is
  // set and signalled under its lock, and nothing of it is touched after.
  pending->done = [&waiter](Result<IngestReceipt> result) {
    std::lock_guard lock(waiter.mu);
    waiter.result = std::move(result);
    waiter.resolved.notify_one();
  };
  Enqueue(std::move(pending));
  std::unique_lock lock(waiter.mu);
  waiter.resolved.wait(lock, [&] { return waiter.result.has_value(); });
  return std::move(*waiter.result);
}

void GroupCommitter::Submit(NewEvent event, Done done) {
  auto pending = std::make_unique<Pending>();
  pending->owned = std::move(event);
  pending->event = &pending->owned;
  pending->done = std::move(done);
  Enqueue(std::move(pending));
}

void GroupCommitter::Enqueue(std::unique_ptr<Pending> pending) {
  std::call_once(started_, [this] {
    for (int i = 0; i < committers_count_; ++i) committers_.emplace_back([this] { CommitLoop(); });
  });
  {
    std::lock_guard lock(mu_);
    if (!stop_) {
      queue_.push_back(pending.release());
      pending = nullptr;
    }
  }
  if (pending) return pending->done(Fail(ErrorKind::kUnavailable, "shutting down"));
  cv_.notify_one();
}

void GroupCommitter::CommitLoop() {
  // A group is whatever queued while the previous commit ran, bounded in count and bytes.
  constexpr size_t kMaxGroup = 512;
  constexpr size_t kMaxGroupBytes = 8 << 20;
  std::vector<Pending*> group;
  for (;;) {
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return !queue_.empty() || stop_; });
      if (queue_.empty()) return;
      size_t bytes = 0;
      while (!queue_.empty() && group.size() < kMaxGroup && bytes < kMaxGroupBytes) {
        bytes += queue_.front()->event->payload.size();
        group.push_back(queue_.front());
        queue_.pop_front();
      }
    }
    CommitGroup(group);
    group.clear();
  }
}

void GroupCommitter::CommitGroup(std::vector<Pending*>& group) {
  ArrayLiteral types, payloads, key_hashes, tenants, ordering_keys, generations, traceparents,
      tracestates, subject_lists;
  for (const Pending* p : group) {
    if (p->event->subjects.empty()) {
      subject_lists.AddNull();
    } else {
      std::string list = "[";
      for (const std::string& s : p->event->subjects) {
        if (list.size() > 1) list += ',';
        AppendJsonString(list, s);
      }
      subject_lists.Add(std::string_view(list += ']'));
    }
    traceparents.Add(p->event->traceparent);
    tracestates.Add(p->event->tracestate);
    generations.Add(p->event->catalog_generation);
    types.Add(std::string_view(p->event->type));
    payloads.Add(std::string_view(p->event->payload));
    tenants.Add(p->event->tenant_id);
    ordering_keys.Add(p->event->ordering_key);
    if (p->event->verify_key_hash.empty()) {
      key_hashes.AddNull();
    } else {
      key_hashes.Add(std::string_view(p->event->verify_key_hash));
    }
  }
  auto lease = pool_.Acquire();  // the group pool has no acquire timeout: always a lease
  // Each is answered once, and freed with its answer.
  auto answer = [](Pending*& p, Result<IngestReceipt> result) {
    std::unique_ptr<Pending> owned(std::exchange(p, nullptr));
    owned->done(std::move(result));
  };
  try {
    pqxx::work tx(lease->conn());
    auto rows = Exec(tx, NamedParams(sql::kInsertEventGroup)
                             .Set("types", types.Finish())
                             .Set("payloads", payloads.Finish())
                             .Set("key_hashes", key_hashes.Finish())
                             .Set("tenant_ids", tenants.Finish())
                             .Set("ordering_keys", ordering_keys.Finish())
                             .Set("catalog_generations", generations.Finish())
                             .Set("traceparents", traceparents.Finish())
                             .Set("tracestates", tracestates.Finish())
                             .Set("wakeup_channel", kWakeupChannel)
                             .Set("subject_lists", subject_lists.Finish()));
    std::vector<IngestReceipt> receipts(group.size());
    std::vector<bool> refused(group.size(), false);
    std::vector<bool> stale(group.size(), false);
    for (const auto& row : rows) {
      const size_t i = row[0].as<size_t>() - 1;
      if (row[1].is_null()) {
        refused[i] = true;
        stale[i] = row[5].as<bool>();
        continue;
      }
      Event& e = receipts[i].event;
      if (e.id == 0) {
        e = Event{row[1].as<int64_t>(),
                  group[i]->event->type,
                  group[i]->event->payload,
                  ToTimestamp(row[2]),
                  {},
                  group[i]->event->tenant_id,
                  group[i]->event->ordering_key,
                  group[i]->event->subjects};
      }
      if (!row[3].is_null()) {
        e.deliveries.push_back(NewDelivery(row[3].as<int64_t>(), e.id, row[4].as<int64_t>(),
                                           e.created_at, e.tenant_id));
      }
    }
    try {
      tx.commit();
    } catch (const pqxx::in_doubt_error&) {
      std::vector<int64_t> ids;
      std::optional<Timestamp> created_at;
      for (size_t i = 0; i < group.size(); ++i) {
        if (refused[i]) continue;
        ids.push_back(receipts[i].event.id);
        created_at = receipts[i].event.created_at;
      }
      if (!created_at || !CommittedAfterDoubt(pool_.url(), ids, *created_at)) throw;
    }
    for (size_t i = 0; i < group.size(); ++i) {
      if (stale[i]) {
        answer(group[i], CatalogChanged());
      } else if (refused[i]) {
        answer(group[i], KeyNotLive());
      } else {
        answer(group[i], std::move(receipts[i]));
      }
    }
  } catch (...) {
    bool discard = false;
    const Error error = CurrentError(&discard);
    if (discard) lease->Discard();
    for (Pending*& p : group) {
      if (p != nullptr) answer(p, std::unexpected(error));
    }
  }
}

}  // namespace webhookd::pg
