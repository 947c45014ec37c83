// A failover by Patroni (scripts/ha): etcd and two Patroni nodes in synchronous mode on
// loopback; under ingest and delivery the leader's Patroni and PostgreSQL get SIGKILL and
// Patroni promotes the synchronous standby on its own. Then the old leader comes back as
// a replica and a planned switchover makes it leader again. webhookd runs on the
// multi-host URL throughout (FailoverLoad checks what it must keep).
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <pqxx/pqxx>
#include <sstream>
#include <stdexcept>

#include "store/pg/migrator.h"
#include "tests/testing/failover_load.h"
#include "tests/testing/process.h"

namespace webhookd::testing::patroni_ha_test {
namespace {

// `scripts/ha` on a state directory of its own; `down` in the destructor, so every
// process it started is stopped also when the test fails.
class HaCluster {
 public:
  HaCluster() {
    char templ[] = "/tmp/webhookd-ha.XXXXXX";
    if (::mkdtemp(templ) == nullptr) throw std::runtime_error("mkdtemp failed");
    dir_ = templ;
    ::chmod(dir_.c_str(), 0755);  // Patroni runs as postgres when the test is root
    try {
      Run("up");
    } catch (...) {
      // No destructor runs for a constructor that throws: what `up` started stops here.
      Down();
      throw;
    }
    std::istringstream env(ReadFile(dir_ + "/ha.env"));
    for (std::string line; std::getline(env, line);) {
      const auto eq = line.find('=');
      if (eq == std::string::npos) continue;
      std::string value = line.substr(eq + 1);
      if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'')) {
        value = value.substr(1, value.size() - 2);
      }
      env_[line.substr(0, eq)] = value;
    }
  }
  ~HaCluster() { Down(); }
  HaCluster(const HaCluster&) = delete;
  HaCluster& operator=(const HaCluster&) = delete;

  // Stops every process of the cluster and removes its directory.
  void Down() {
    try {
      Run("down");
    } catch (const std::exception& e) {
      std::fprintf(stderr, "scripts/ha down: %s\n", e.what());
    }
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }

  // Runs `scripts/ha ARGS`; its output, or an exception naming it when it failed.
  std::string Run(const std::string& args) {
    const std::string command = "WEBHOOKD_HA_DIR=" + dir_ + " timeout -k 5 300 " +
                                std::string(WEBHOOKD_SOURCE_DIR) + "/scripts/ha " + args + " 2>&1";
    FILE* pipe = ::popen(command.c_str(), "r");
    if (pipe == nullptr) throw std::runtime_error("popen failed");
    std::string out;
    std::array<char, 4096> buf{};
    while (size_t n = std::fread(buf.data(), 1, buf.size(), pipe)) out.append(buf.data(), n);
    const int status = ::pclose(pipe);
    std::printf("scripts/ha %s:\n%s", args.c_str(), out.c_str());
    std::fflush(stdout);
    if (status != 0) throw std::runtime_error("scripts/ha " + args + " failed:\n" + out);
    return out;
  }

  std::string env(const std::string& name) const {
    auto it = env_.find(name);
    if (it == env_.end()) throw std::runtime_error("ha.env has no " + name);
    return it->second;
  }

 private:
  std::string dir_;
  std::map<std::string, std::string> env_;
};

// The value of `name=value` in a line of `text`.
std::string Field(const std::string& text, const std::string& name) {
  const auto at = text.rfind(name + "=");
  if (at == std::string::npos) return "";
  const auto from = at + name.size() + 1;
  return text.substr(from, text.find_first_of(" \n", from) - from);
}

TEST(PatroniHaTest, PatroniFailsOverAndBackWithoutLosingAnAcceptedEvent) {
  HaCluster ha;
  const std::string admin_url = ha.env("DATABASE_URL");
  {
    pqxx::connection conn(admin_url);
    pqxx::nontransaction(conn).exec("CREATE DATABASE webhookd_ha");
  }
  std::string url = admin_url;
  const auto db = url.find("/postgres");
  ASSERT_NE(db, std::string::npos) << url;
  url.replace(db, std::string("/postgres").size(), "/webhookd_ha");
  auto migrated = pg::Migrate(url, pg::EmbeddedMigrations());
  ASSERT_TRUE(migrated) << migrated.error().message;

  FailoverLoad load(url);
  std::string killed;
  load.Run({
      [&] {
        const std::string out = ha.Run("failover");
        killed = Field(out, "killed");
        return std::stod(Field(out, "seconds"));
      },
      [&] {
        // Planned: the old leader rejoins as a replica, then takes over again. Timed as
        // a whole (an upper bound of the switchover's own gap).
        ha.Run("start " + killed);
        const auto from = std::chrono::steady_clock::now();
        ha.Run("switchover " + killed);
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - from).count();
      },
  });
  ASSERT_FALSE(killed.empty());
  EXPECT_NE(ha.Run("leader").find(killed), std::string::npos) << "the switchover back did not hold";
  load.Check("patroni failover and switchover back");
}

}  // namespace
}  // namespace webhookd::testing::patroni_ha_test
