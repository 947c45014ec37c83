#include "tests/testing/test_database.h"

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <mutex>
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

namespace {

// A migrated database to copy (CREATE DATABASE ... TEMPLATE copies its files): migrating
// each test's database from nothing took over a second, most of a short test. One per
// cluster for each set of migrations and definitions, and each day, as migrating creates
// the history's partitions from the day it runs (migrations/0038_history_days.sql). Made
// under a temporary name and renamed once complete, under an advisory lock, so that
// concurrent test processes make it once and never copy a half-made one.
std::string MigratedTemplate() {
  static std::once_flag once;
  static std::string name;
  std::call_once(once, [] {
    size_t h = std::hash<std::string>{}(pg::EmbeddedSchema().hash);
    for (const auto& m : pg::EmbeddedMigrations()) {
      h = h * 31 + std::hash<std::string>{}(m.version + m.sql);
    }
    const std::time_t now = std::time(nullptr);
    std::tm utc{};
    ::gmtime_r(&now, &utc);
    char text[64];
    std::snprintf(text, sizeof text, "webhookd_tmpl_%016zx_%04d%02d%02d", h, utc.tm_year + 1900,
                  utc.tm_mon + 1, utc.tm_mday);
    name = text;
    pqxx::connection admin(TestDatabase::AdminUrl());
    pqxx::nontransaction tx(admin);
    tx.exec("SELECT pg_advisory_lock(7252099)");
    if (tx.exec_params1("SELECT count(*) FROM pg_database WHERE datname = $1", name)[0].as<int>() ==
        0) {
      const std::string making = name + "_making";
      tx.exec("DROP DATABASE IF EXISTS " + making + " WITH (FORCE)");
      tx.exec("CREATE DATABASE " + making);
      auto applied = pg::Migrate(TestDatabase::WithDatabase(TestDatabase::AdminUrl(), making),
                                 pg::EmbeddedMigrations());
      if (!applied) throw std::runtime_error("migrate failed: " + applied.error().message);
      tx.exec("ALTER DATABASE " + making + " RENAME TO " + name);
    }
    tx.exec("SELECT pg_advisory_unlock(7252099)");
  });
  return name;
}

}  // namespace

TestDatabase::TestDatabase(bool migrate) {
  std::random_device rd;
  name_ = "webhookd_t_" + std::to_string(rd()) + std::to_string(rd() % 100000);
  const std::string from_template = migrate ? " TEMPLATE " + MigratedTemplate() : "";
  {
    pqxx::connection admin(AdminUrl());
    pqxx::nontransaction tx(admin);
    tx.exec("CREATE DATABASE " + name_ + from_template);
  }
  url_ = WithDatabase(AdminUrl(), name_);
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
