#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <pqxx/pqxx>
#include <string>
#include <vector>

#include "store/pg/reconnect_backoff.h"

namespace webhookd::pg {

// How a pool's connections plan their prepared statements.
enum class Plans {
  // A plan for the arguments given, at every call: for the list queries, whose optional
  // filters need one.
  kPerCall,
  // One plan for any arguments (sql/scripts/generic_plans.sql): for the hot batch
  // statements, whose re-planning on every call cost as much as running them.
  kGeneric,
  // kGeneric, and that one plan reaches rows by key only (sql/scripts/key_plans.sql): for
  // the worker's statements, whose plan made on a small table must still hold on a big one.
  kGenericByKey,
};

// A fixed number of libpqxx connections, each used by one thread at a time (libpqxx
// connections are not thread-safe). Connections are made lazily and remade after they
// break, so the pool rides out a database restart and a failover: with several hosts
// and target_session_attrs=read-write in the URL, libpq picks whichever host is primary
// now. When one connection is lost, every connection made before it is dropped at its
// next use (they almost surely led to the same lost server), and reconnecting backs off
// (ReconnectBackoff) while no host takes connections.
class PgPool {
 public:
  // `acquire_timeout` bounds the wait for a free connection (zero: wait as long as it
  // takes); `statement_timeout`, each statement run on the pool's connections (zero:
  // none), so that a request cannot hold a connection and a backend without bound.
  PgPool(std::string url, int size, Plans plans = Plans::kPerCall,
         std::chrono::milliseconds acquire_timeout = std::chrono::milliseconds::zero(),
         std::chrono::milliseconds statement_timeout = std::chrono::milliseconds::zero());
  PgPool(const PgPool&) = delete;
  PgPool& operator=(const PgPool&) = delete;

  class Lease {
   public:
    Lease(PgPool& pool, size_t slot) : pool_(&pool), slot_(slot) {}
    Lease(Lease&& other) noexcept : pool_(other.pool_), slot_(other.slot_) {
      other.pool_ = nullptr;
    }
    Lease(const Lease&) = delete;
    ~Lease();
    // Connects if needed; throws pqxx::broken_connection when the database is down.
    pqxx::connection& conn();
    // The connection is suspect (it failed mid-use): close it so the next user reconnects,
    // and so do the pool's other connections made before it.
    void Discard();

   private:
    PgPool* pool_;
    size_t slot_;
  };

  // Blocks until a connection is free, at most the pool's acquire timeout: nullopt then.
  std::optional<Lease> Acquire();

  const std::string& url() const { return url_; }

  // Makes a fresh connection set up as every webhookd connection is: UTC, a bounded
  // idle-in-transaction time, every statement of sql/ prepared; and its statements
  // bounded by `statement_timeout` unless that is zero.
  static std::unique_ptr<pqxx::connection> Connect(
      const std::string& url, Plans plans = Plans::kPerCall,
      std::chrono::milliseconds statement_timeout = std::chrono::milliseconds::zero());

 private:
  void Release(size_t slot);
  // Connect() unless a recent attempt failed and its backoff has not run out (then it
  // throws pqxx::broken_connection at once).
  std::unique_ptr<pqxx::connection> Reconnect();

  std::string url_;
  Plans plans_;
  std::chrono::milliseconds acquire_timeout_;
  std::chrono::milliseconds statement_timeout_;
  std::mutex mu_;
  std::condition_variable free_cv_;
  std::vector<std::unique_ptr<pqxx::connection>> conns_;  // slot i: its lease holder's
  std::vector<uint64_t> made_in_;  // slot i: the epoch its connection was made in
  std::vector<size_t> free_;
  // Raised when a connection of the current epoch is lost; older connections are dropped.
  std::atomic<uint64_t> epoch_{0};
  ReconnectBackoff backoff_;  // guarded by mu_
};

}  // namespace webhookd::pg
