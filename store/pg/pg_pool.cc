#include "store/pg/pg_pool.h"

#include "store/pg/exec.h"
#include "store/pg/statements.h"

namespace webhookd::pg {

PgPool::PgPool(std::string url, int size, Plans plans, std::chrono::milliseconds acquire_timeout,
               std::chrono::milliseconds statement_timeout)
    : url_(std::move(url)),
      plans_(plans),
      acquire_timeout_(acquire_timeout),
      statement_timeout_(statement_timeout),
      conns_(size),
      made_in_(size, 0),
      backoff_(std::chrono::milliseconds(50), std::chrono::seconds(1)) {
  for (int i = size - 1; i >= 0; --i) free_.push_back(static_cast<size_t>(i));
}

std::unique_ptr<pqxx::connection> PgPool::Connect(const std::string& url, Plans plans,
                                                  std::chrono::milliseconds statement_timeout) {
  auto conn = std::make_unique<pqxx::connection>(url);
  {
    pqxx::nontransaction tx(*conn);
    tx.exec(std::string(sql::kSessionSetup.sql));
    if (plans != Plans::kPerCall) tx.exec(std::string(sql::kGenericPlans.sql));
    if (plans == Plans::kGenericByKey) tx.exec(std::string(sql::kKeyPlans.sql));
  }
  // libpqxx registers these with the server lazily, on first use, so a connection made
  // before `migrate` works for the statements that need no table.
  for (const Query& q : sql::kPrepared) conn->prepare(std::string(q.name), std::string(q.sql));
  if (statement_timeout > std::chrono::milliseconds::zero()) {
    pqxx::nontransaction tx(*conn);
    Exec(tx, sql::kSetStatementTimeout,
         Params().Add(std::to_string(statement_timeout.count()) + "ms"));
  }
  return conn;
}

std::optional<PgPool::Lease> PgPool::Acquire() {
  std::unique_lock lock(mu_);
  const auto free = [&] { return !free_.empty(); };
  if (acquire_timeout_ == std::chrono::milliseconds::zero()) {
    free_cv_.wait(lock, free);
  } else if (!free_cv_.wait_for(lock, acquire_timeout_, free)) {
    return std::nullopt;
  }
  const size_t slot = free_.back();
  free_.pop_back();
  return Lease(*this, slot);
}

void PgPool::Release(size_t slot) {
  {
    std::lock_guard lock(mu_);
    free_.push_back(slot);
  }
  free_cv_.notify_one();
}

PgPool::Lease::~Lease() {
  if (pool_ != nullptr) pool_->Release(slot_);
}

pqxx::connection& PgPool::Lease::conn() {
  auto& conn = pool_->conns_[slot_];
  const uint64_t epoch = pool_->epoch_.load();
  if (conn && (!conn->is_open() || pool_->made_in_[slot_] != epoch)) conn.reset();
  if (!conn) conn = pool_->Reconnect();
  pool_->made_in_[slot_] = epoch;
  return *conn;
}

void PgPool::Lease::Discard() {
  auto& conn = pool_->conns_[slot_];
  if (!conn) return;
  conn.reset();
  // Only the first loss of an epoch raises it: connections already remade to the new
  // primary must not be dropped again by the late failures of older ones.
  uint64_t made_in = pool_->made_in_[slot_];
  pool_->epoch_.compare_exchange_strong(made_in, made_in + 1);
}

std::unique_ptr<pqxx::connection> PgPool::Reconnect() {
  {
    std::lock_guard lock(mu_);
    if (!backoff_.MayTry(std::chrono::steady_clock::now())) {
      throw pqxx::broken_connection("the database is unavailable; reconnecting shortly");
    }
  }
  try {
    auto conn = Connect(url_, plans_, statement_timeout_);
    std::lock_guard lock(mu_);
    backoff_.Succeeded();
    return conn;
  } catch (const std::exception&) {
    std::lock_guard lock(mu_);
    backoff_.Failed(std::chrono::steady_clock::now());
    throw;
  }
}

}  // namespace webhookd::pg
