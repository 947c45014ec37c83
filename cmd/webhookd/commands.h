#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/config.h"
#include "base/result.h"
#include "store/pg/migrator.h"
#include "store/store.h"

namespace webhookd::cmd {

// Each command returns the process exit code: 0 done, 1 failed, 2 bad usage or
// configuration.
int Migrate(const std::vector<std::string>& args);
enum class Mode { kServer, kWorker, kAll };
int Serve(const std::vector<std::string>& args, Mode mode);
int Keys(const std::vector<std::string>& args);
int DeadLetters(const std::vector<std::string>& args);
int Destinations(const std::vector<std::string>& args);
int Sources(const std::vector<std::string>& args);
int Recoveries(const std::vector<std::string>& args);
int Feed(const std::vector<std::string>& args);
int Secrets(const std::vector<std::string>& args);
int Retention(const std::vector<std::string>& args);

// Start-up: warns when credentials are stored in plaintext, and returns 1 (after one
// line on stderr) when the database holds credentials no configured key decrypts.
int CheckStoredCredentials(SecretStore& store, const Config& config);

// What a store is opened for; it sizes the connection pool.
enum class StoreUse { kServer, kWorker, kCommand };
// The store in use (PostgreSQL at config.database_url). Defined in serve.cc, the
// composition root.
std::unique_ptr<Store> OpenStore(const Config& config, StoreUse use);
// Applies every embedded migration not applied yet, then the SQL definitions if their set
// is new; returns what it applied.
Result<pg::Migrated> ApplyMigrations(const std::string& database_url);

}  // namespace webhookd::cmd
