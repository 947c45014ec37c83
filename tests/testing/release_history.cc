#include "tests/testing/release_history.h"

#include <gtest/gtest.h>

#include <pqxx/pqxx>
#include <sstream>
#include <utility>

#include "tests/testing/process.h"

namespace webhookd::testing {
namespace {

std::string Git(const std::string& args) {
  return "git -C '" WEBHOOKD_SOURCE_DIR "' " + args + " 2>/dev/null";
}

std::string Stem(const std::string& path) {
  const auto slash = path.rfind('/');
  return path.substr(slash + 1, path.size() - slash - 1 - 4);
}

}  // namespace

std::string FileAtCommit(const std::string& commit, const std::string& path) {
  auto [status, text] = RunCommand(Git("show " + commit + ":" + path));
  if (status != 0) {
    ADD_FAILURE() << "cannot read " << path << " at commit " << commit << " from the git "
                  << "history of " WEBHOOKD_SOURCE_DIR
                  << ": this test needs the repository's full history (git fetch --unshallow)";
  }
  return text;
}

std::vector<std::string> SqlFilesAtCommit(const std::string& commit, const std::string& dir) {
  auto [status, list] = RunCommand(Git("ls-tree --name-only " + commit + " " + dir + "/"));
  std::vector<std::string> files;
  std::istringstream lines(list);
  for (std::string line; std::getline(lines, line);) {
    if (line.ends_with(".sql")) files.push_back(line);
  }
  if (status != 0 || files.empty()) {
    ADD_FAILURE() << "cannot list " << dir << " at commit " << commit << " in "
                  << WEBHOOKD_SOURCE_DIR
                  << ": this test needs the repository's full history (git fetch --unshallow)";
  }
  return files;
}

void MigrateAsAtCommit(const std::string& commit, const std::string& url) {
  pqxx::connection conn(url);
  {
    pqxx::nontransaction tx(conn);
    for (const char* script :
         {"create_schema", "create_migrations_table", "create_schema_definitions_table"}) {
      tx.exec(FileAtCommit(commit, std::string("store/pg/sql/scripts/") + script + ".sql"));
    }
  }
  for (const auto& path : SqlFilesAtCommit(commit, "migrations")) {
    pqxx::work tx(conn);
    tx.exec(FileAtCommit(commit, path));
    tx.exec_params("INSERT INTO webhookd.schema_migrations (version) VALUES ($1)", Stem(path));
    tx.commit();
  }
  pqxx::work tx(conn);
  tx.exec("SET LOCAL check_function_bodies = off");
  std::vector<std::string> views;
  for (const auto& path : SqlFilesAtCommit(commit, "store/pg/schema")) {
    std::string text = FileAtCommit(commit, path);
    if (text.find("CREATE OR REPLACE VIEW") != std::string::npos) {
      views.push_back(std::move(text));
    } else {
      tx.exec(text);
    }
  }
  for (const auto& view : views) tx.exec(view);
  tx.exec_params("INSERT INTO webhookd.schema_definitions (hash) VALUES ($1)", "as at " + commit);
  tx.commit();
}

}  // namespace webhookd::testing
