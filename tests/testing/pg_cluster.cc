#include "tests/testing/pg_cluster.h"

#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <pqxx/pqxx>
#include <stdexcept>
#include <thread>

#include "store/pg/migrator.h"
#include "tests/testing/process.h"

namespace webhookd::testing {
namespace {

std::string Env(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? "" : value;
}

// Runs argv[0] (an absolute path) from "/" with stdout and stderr appended to `log`;
// returns its exit code (128 + signal when killed).
int RunFromRoot(const std::vector<std::string>& argv, const std::string& log) {
  std::vector<std::string> copy = argv;
  std::vector<char*> args;
  for (auto& a : copy) args.push_back(a.data());
  args.push_back(nullptr);
  const int log_fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log_fd < 0) throw std::runtime_error("cannot open " + log);
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    ::dup2(log_fd, 1);
    ::dup2(log_fd, 2);
    // The cluster's owner may not be allowed into the test's working directory.
    if (::chdir("/") != 0) ::_exit(126);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  ::close(log_fd);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace

void PgCluster::MakeDirectory() {
  char templ[] = "/tmp/webhookd-pgc.XXXXXX";
  if (::mkdtemp(templ) == nullptr) throw std::runtime_error("mkdtemp failed");
  dir_ = templ;
  ::chmod(dir_.c_str(), 0755);
  if (!user_.empty()) {
    const passwd* pw = ::getpwnam(user_.c_str());
    if (pw == nullptr) throw std::runtime_error("no OS user " + user_);
    if (::chown(dir_.c_str(), pw->pw_uid, pw->pw_gid) != 0) {
      throw std::runtime_error("cannot give " + dir_ + " to " + user_);
    }
  }
  data_ = dir_ + "/data";
  log_path_ = dir_ + "/postgres.log";
}

PgCluster::PgCluster() : bin_(Env("WEBHOOKD_TEST_PG_BIN")), user_(Env("WEBHOOKD_TEST_PG_USER")) {
  if (bin_.empty()) {
    throw std::runtime_error("WEBHOOKD_TEST_PG_BIN is not set: run the tests with scripts/test");
  }
  MakeDirectory();
  if (RunPg({"initdb", "-D", data_, "-U", "webhookd", "--auth=trust", "-E", "UTF8", "--no-locale",
             "--no-sync"}) != 0) {
    throw std::runtime_error("initdb failed; see " + dir_ + "/commands.log:\n" +
                             ReadFile(dir_ + "/commands.log"));
  }
  StartOnFreePort();
}

void PgCluster::SetOptions() {
  options_ = "-c port=" + std::to_string(port_) +
             " -c listen_addresses=127.0.0.1 -c unix_socket_directories=" + dir_ +
             // fsync off only spares the disk: an immediate shutdown kills processes,
             // not the kernel, so what was written survives. synchronous_commit stays
             // on: off, a commit acknowledged to webhookd could vanish in the restart.
             " -c fsync=off -c max_connections=200 -c shared_buffers=64MB";
}

void PgCluster::StartOnFreePort() {
  for (int attempt = 0;; ++attempt) {
    port_ = FreePort();
    SetOptions();
    try {
      Start();
      break;
    } catch (const std::exception&) {
      // Most likely another process took the port between the probe and the bind.
      if (attempt == 4) throw;
    }
  }
}

std::unique_ptr<PgCluster> PgCluster::StandbyOf(const PgCluster& primary) {
  return std::unique_ptr<PgCluster>(new PgCluster(StandbyTag{}, primary));
}

PgCluster::PgCluster(StandbyTag, const PgCluster& primary)
    : bin_(primary.bin_), user_(primary.user_) {
  MakeDirectory();
  // The initdb default pg_hba.conf trusts replication connections from 127.0.0.1, and
  // wal_level=replica with 10 WAL senders is the default: nothing to set on the primary.
  if (RunPg({"pg_basebackup", "-D", data_, "-h", "127.0.0.1", "-p", std::to_string(primary.port_),
             "-U", "webhookd", "-R", "-X", "stream", "--no-sync", "-c", "fast"}) != 0) {
    throw std::runtime_error("pg_basebackup failed; see " + dir_ + "/commands.log:\n" +
                             ReadFile(dir_ + "/commands.log"));
  }
  StartOnFreePort();
}

PgCluster::~PgCluster() {
  try {
    if (running_) RunPg({"pg_ctl", "stop", "-D", data_, "-m", "immediate", "-w", "-t", "30"});
  } catch (const std::exception&) {
  }
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

int PgCluster::RunPg(const std::vector<std::string>& args) {
  std::vector<std::string> argv;
  if (!user_.empty()) argv = {"/usr/sbin/runuser", "-u", user_, "--"};
  argv.push_back(bin_ + "/" + args.front());
  argv.insert(argv.end(), args.begin() + 1, args.end());
  return RunFromRoot(argv, dir_ + "/commands.log");
}

std::string PgCluster::Url(const std::string& db) const {
  return "postgresql://webhookd@127.0.0.1:" + std::to_string(port_) + "/" + db;
}

std::string PgCluster::CreateMigratedDatabase(const std::string& name) {
  {
    pqxx::connection admin(Url());
    pqxx::nontransaction tx(admin);
    tx.exec("CREATE DATABASE " + name);
  }
  const std::string url = Url(name);
  auto applied = pg::Migrate(url, pg::EmbeddedMigrations());
  if (!applied) throw std::runtime_error("migrate failed: " + applied.error().message);
  return url;
}

void PgCluster::WaitReady() {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  for (;;) {
    try {
      pqxx::connection conn(Url());
      return;
    } catch (const std::exception& e) {
      if (std::chrono::steady_clock::now() > deadline) {
        throw std::runtime_error(std::string("PostgreSQL is not ready: ") + e.what() + "\n" +
                                 ReadFile(log_path_));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
}

void PgCluster::Start() {
  if (RunPg({"pg_ctl", "start", "-D", data_, "-l", log_path_, "-w", "-t", "60", "-o", options_}) !=
      0) {
    throw std::runtime_error("pg_ctl start failed; see " + log_path_ + ":\n" + ReadFile(log_path_));
  }
  running_ = true;
  WaitReady();
}

void PgCluster::StopImmediate() {
  if (RunPg({"pg_ctl", "stop", "-D", data_, "-m", "immediate", "-w", "-t", "60"}) != 0) {
    throw std::runtime_error("pg_ctl stop -m immediate failed");
  }
  running_ = false;
}

void PgCluster::RestartImmediate() {
  if (RunPg({"pg_ctl", "restart", "-D", data_, "-m", "immediate", "-l", log_path_, "-w", "-t", "60",
             "-o", options_}) != 0) {
    throw std::runtime_error("pg_ctl restart -m immediate failed; see " + log_path_ + ":\n" +
                             ReadFile(log_path_));
  }
  running_ = true;
  WaitReady();
}

void PgCluster::MakeSynchronous() {
  {
    pqxx::connection conn(Url());
    pqxx::nontransaction tx(conn);
    tx.exec("ALTER SYSTEM SET synchronous_standby_names = '*'");
    tx.exec("SELECT pg_reload_conf()");
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  for (;;) {
    pqxx::connection conn(Url());
    pqxx::nontransaction tx(conn);
    if (tx.exec("SELECT 1 FROM pg_stat_replication WHERE sync_state = 'sync'").size() == 1) return;
    if (std::chrono::steady_clock::now() > deadline) {
      throw std::runtime_error("no standby became synchronous within 60 s");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

void PgCluster::KillPostmaster() {
  const std::string pidfile = ReadFile(data_ + "/postmaster.pid");
  const pid_t postmaster = static_cast<pid_t>(std::atol(pidfile.c_str()));
  if (postmaster <= 1) throw std::runtime_error("no postmaster.pid in " + data_);
  // Its children first, found before it dies (they would then belong to init).
  std::vector<pid_t> children;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const std::string stat = ReadFile(entry.path().string() + "/stat");
    // pid (comm) state ppid ...: comm may hold spaces, so read after the last ')'.
    const auto close = stat.rfind(')');
    if (close == std::string::npos) continue;
    int ppid = 0;
    char state = 0;
    if (std::sscanf(stat.c_str() + close + 1, " %c %d", &state, &ppid) == 2 && ppid == postmaster) {
      children.push_back(static_cast<pid_t>(std::stol(name)));
    }
  }
  ::kill(postmaster, SIGKILL);
  for (const pid_t child : children) ::kill(child, SIGKILL);
  running_ = false;
}

void PgCluster::Promote() {
  if (RunPg({"pg_ctl", "promote", "-D", data_, "-w", "-t", "60"}) != 0) {
    throw std::runtime_error("pg_ctl promote failed; see " + log_path_ + ":\n" +
                             ReadFile(log_path_));
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  for (;;) {
    pqxx::connection conn(Url());
    pqxx::nontransaction tx(conn);
    if (!tx.exec("SELECT pg_is_in_recovery()")[0][0].as<bool>()) return;
    if (std::chrono::steady_clock::now() > deadline) {
      throw std::runtime_error("the promoted standby is still in recovery after 60 s");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

void PgCluster::Stop() {
  if (!running_) return;
  RunPg({"pg_ctl", "stop", "-D", data_, "-m", "fast", "-w", "-t", "60"});
  running_ = false;
}

}  // namespace webhookd::testing
