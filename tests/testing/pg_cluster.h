#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace webhookd::testing {

// A private PostgreSQL cluster for one test, for tests that stop or restart the database
// (never the shared cluster of WEBHOOKD_TEST_DATABASE_URL: other tests run against it in
// parallel). initdb's a cluster in a temporary directory with the binaries of
// $WEBHOOKD_TEST_PG_BIN (superuser `webhookd`, trust auth), starts it on 127.0.0.1 at a
// free port with fsync off, and stops it and removes the directory in the destructor.
// When $WEBHOOKD_TEST_PG_USER is set (scripts/test sets it to `postgres` when root, as
// PostgreSQL refuses to run as root), every server program runs as that user through
// runuser and the directory is given to it.
class PgCluster {
 public:
  PgCluster();
  ~PgCluster();
  // A streaming standby of `primary` (pg_basebackup -R -X stream) in a directory of its
  // own, started on another free port; returns once it accepts (read-only) connections.
  // It is a synchronous standby once the primary has MakeSynchronous().
  static std::unique_ptr<PgCluster> StandbyOf(const PgCluster& primary);
  PgCluster(const PgCluster&) = delete;
  PgCluster& operator=(const PgCluster&) = delete;

  int port() const { return port_; }
  // postgresql://webhookd@127.0.0.1:<port>/<db>
  std::string Url(const std::string& db = "postgres") const;
  // Creates database `name` and applies webhookd's migrations to it; returns its URL.
  std::string CreateMigratedDatabase(const std::string& name);

  // `pg_ctl restart -m immediate`: the postmaster and every backend are killed at once
  // (no checkpoint, crash recovery on start) and the server is started again on the same
  // port. Returns when it accepts connections again.
  void RestartImmediate();
  // `pg_ctl stop -m immediate` (returns once the server is gone) ...
  void StopImmediate();
  // ... and `pg_ctl start` on the same port (returns once it accepts connections).
  void Start();
  // A fast shutdown; quiet when it is not running.
  void Stop();

  // On a primary: synchronous_standby_names = '*' (ALTER SYSTEM, so a standby made
  // before keeps its own empty setting and does not wait for a standby of its own once
  // promoted); returns once a standby streams as `sync` (pg_stat_replication).
  void MakeSynchronous();
  // SIGKILL to the postmaster and every process it started, as when the machine dies:
  // no shutdown, no goodbye to the clients or the standby. Returns at once.
  void KillPostmaster();
  // On a standby: `pg_ctl promote`; returns once it accepts read-write transactions.
  void Promote();

  const std::string& log_path() const { return log_path_; }

 private:
  struct StandbyTag {};
  // A fresh temporary directory (given to the cluster's owner), data_ and log_path_ in it.
  void MakeDirectory();
  PgCluster(StandbyTag, const PgCluster& primary);
  // The server settings of this cluster's port; Start() runs with them.
  void SetOptions();
  // Starts on a free port, retrying with another when the port was taken meanwhile.
  void StartOnFreePort();
  // Runs a PostgreSQL program of $WEBHOOKD_TEST_PG_BIN (as the cluster's owner); returns
  // its exit code; its output goes to the cluster's log directory.
  int RunPg(const std::vector<std::string>& args);
  void WaitReady();

  std::string bin_;
  std::string user_;
  std::string dir_;
  std::string data_;
  std::string log_path_;
  std::string options_;
  int port_ = 0;
  bool running_ = false;
};

}  // namespace webhookd::testing
