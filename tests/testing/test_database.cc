#include "tests/testing/test_database.h"

#include <cstdlib>
#include <random>
#include <stdexcept>

#include "store/pg/migrator.h"

namespace webhookd::testing {

std::string TestDatabase::AdminUrl() {
  const char* url = std::getenv("WEBHOOKD_TEST_DATABASE_URL");
  if (url == nullptr || *url == '\0') {
    throw std::runtime_error(
        "WEBHOOKD_TEST_DATABASE_URL is not set: run the tests with scripts/test");
  }
  return url;
}

std::string TestDatabase::WithDatabase(const std::string& url, const std::string& db) {
  const size_t query = url.find('?');
  const std::string base = url.substr(0, query);
  const size_t slash = base.rfind('/');
  if (slash == std::string::npos || slash < base.find("//") + 2) {
    throw std::runtime_error("WEBHOOKD_TEST_DATABASE_URL must be a URI with a database name");
  }
  return base.substr(0, slash + 1) + db + (query == std::string::npos ? "" : url.substr(query));
}

TestDatabase::TestDatabase(bool migrate) {
  std::random_device rd;
  name_ = "webhookd_t_" + std::to_string(rd()) + std::to_string(rd() % 100000);
  {
    pqxx::connection admin(AdminUrl());
    pqxx::nontransaction tx(admin);
    tx.exec("CREATE DATABASE " + name_);
  }
  url_ = WithDatabase(AdminUrl(), name_);
  if (migrate) {
    auto applied = pg::Migrate(url_, pg::EmbeddedMigrations());
    if (!applied) throw std::runtime_error("migrate failed: " + applied.error().message);
  }
}

TestDatabase::~TestDatabase() {
  try {
    pqxx::connection admin(AdminUrl());
    pqxx::nontransaction tx(admin);
    tx.exec("DROP DATABASE IF EXISTS " + name_ + " WITH (FORCE)");
  } catch (const std::exception&) {
    // A leftover database in a throw-away cluster harms nothing.
  }
}

std::unique_ptr<pqxx::connection> TestDatabase::Connect(const std::string& url) {
  auto conn = std::make_unique<pqxx::connection>(url);
  pqxx::nontransaction(*conn).exec("SET search_path = webhookd, public");
  return conn;
}

std::string TestDatabase::Scalar(const std::string& sql) {
  auto conn = Connect(url_);
  pqxx::nontransaction tx(*conn);
  auto r = tx.exec(sql);
  if (r.empty() || r[0][0].is_null()) return "";
  return r[0][0].c_str();
}

void TestDatabase::Exec(const std::string& sql) {
  auto conn = Connect(url_);
  pqxx::work tx(*conn);
  tx.exec(sql);
  tx.commit();
}

}  // namespace webhookd::testing
