#pragma once

#include <memory>
#include <pqxx/pqxx>
#include <string>

namespace webhookd::testing {

// A delivery as the API shows it (store/pg/schema/delivery_rows.sql) with what only the
// engine sees: its schedule's cycle and, from the queue, its lease and claim token. A
// subquery for tests that read or assert those (`FROM " + kDeliveryState + " d WHERE`).
inline const std::string kDeliveryState =
    "(SELECT r.*, x.cycle_attempts, q.lease_until, q.claim_token"
    " FROM webhookd.delivery_rows r JOIN webhookd.deliveries x ON x.id = r.id"
    " LEFT JOIN webhookd.delivery_queue q ON q.id = r.id)";

// A fresh, migrated database on the cluster of WEBHOOKD_TEST_DATABASE_URL (scripts/test
// starts one), dropped again when the test ends.
class TestDatabase {
 public:
  explicit TestDatabase(bool migrate = true);
  ~TestDatabase();
  TestDatabase(const TestDatabase&) = delete;
  TestDatabase& operator=(const TestDatabase&) = delete;

  const std::string& url() const { return url_; }
  const std::string& name() const { return name_; }

  // The first column of the first row of `sql`, as text ("" for NULL or no row).
  std::string Scalar(const std::string& sql);
  // Runs `sql` in its own transaction.
  void Exec(const std::string& sql);

  // A connection to `url` that finds webhookd's tables (schema webhookd) by their names.
  static std::unique_ptr<pqxx::connection> Connect(const std::string& url);

  // The admin URL of the cluster (the "postgres" database).
  static std::string AdminUrl();
  // `url` with its database name replaced.
  static std::string WithDatabase(const std::string& url, const std::string& db);

 private:
  std::string name_;
  std::string url_;
};

}  // namespace webhookd::testing
