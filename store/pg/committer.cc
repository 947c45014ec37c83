#include "store/pg/committer.h"

#include "store/pg/errors.h"
#include "store/pg/exec.h"
#include "store/pg/rows.h"
#include "store/pg/statements.h"

namespace webhookd::pg {

struct GroupCommitter::Pending {
  const NewEvent* event;
  std::optional<Result<IngestReceipt>> result;
  std::mutex mu;
  std::condition_variable done;
};

GroupCommitter::GroupCommitter(const std::string& url, int committers)
    : pool_(url, std::max(1, committers), Plans::kGeneric),
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
  std::call_once(started_, [this] {
    for (int i = 0; i < committers_count_; ++i) committers_.emplace_back([this] { CommitLoop(); });
  });
  Pending pending{&event, std::nullopt, {}, {}};
  {
    std::lock_guard lock(mu_);
    if (stop_) return Fail(ErrorKind::kUnavailable, "shutting down");
    queue_.push_back(&pending);
  }
  cv_.notify_one();
  std::unique_lock lock(pending.mu);
  pending.done.wait(lock, [&] { return pending.result.has_value(); });
  return std::move(*pending.result);
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
      tracestates;
  for (const Pending* p : group) {
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
  // The waiter owns `p` and may free it once it sees a result, so the result is set and
  // signalled under its lock and `p` is not touched after.
  auto answer = [](Pending* p, Result<IngestReceipt> result) {
    std::lock_guard lock(p->mu);
    p->result = std::move(result);
    p->done.notify_one();
  };
  try {
    pqxx::work tx(lease->conn());
    auto rows = Exec(tx, sql::kInsertEventGroup,
                     Params()
                         .Add(types.Finish())
                         .Add(payloads.Finish())
                         .Add(key_hashes.Finish())
                         .Add(tenants.Finish())
                         .Add(ordering_keys.Finish())
                         .Add(generations.Finish())
                         .Add(traceparents.Finish())
                         .Add(tracestates.Finish()));
    bool any_delivery = false;
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
                  group[i]->event->ordering_key};
      }
      if (!row[3].is_null()) {
        e.deliveries.push_back(NewDelivery(row[3].as<int64_t>(), e.id, row[4].as<int64_t>(),
                                           e.created_at, e.tenant_id));
        any_delivery = true;
      }
    }
    if (any_delivery) NotifyWakeup(tx);
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
    for (Pending* p : group) answer(p, std::unexpected(error));
  }
}

}  // namespace webhookd::pg
