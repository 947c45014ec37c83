// store/pg/schema.sql is the schema every migration and schema file builds, as pg_dump
// prints it: a reader sees each table whole there instead of replaying the migrations.
// This test holds it true. After a change of the schema, write it again with
//   WEBHOOKD_WRITE_SCHEMA=1 build-test/tests/store/pg/pg_tests --gtest_filter='LiveSchema*'
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "tests/testing/pg_fixture.h"

namespace webhookd::live_schema_pgtest {
namespace {

constexpr const char* kHeader =
    "-- The schema webhookd's migrations and schema files build (migrations/, store/pg/schema/),\n"
    "-- as `pg_dump --schema-only --schema=webhookd` prints it, less each day's partitions of\n"
    "-- the history and the rollups (named *_pYYYYMMDD; made a week ahead and dropped by\n"
    "-- retention: docs/retention.md). Read it to see a table whole; change the schema with\n"
    "-- a migration, never here. tests/store/pg/live_schema_pgtest.cc holds it equal to what\n"
    "-- the migrations build, and writes it again when WEBHOOKD_WRITE_SCHEMA=1.\n";

std::string Run(const std::string& command) {
  std::string out;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return out;
  char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) out.append(buf, n);
  EXPECT_EQ(pclose(pipe), 0) << command;
  return out;
}

// pg_dump of the schema, less what differs between two runs or two days: the \restrict
// keys (random per run), the versions in the header, each day's partitions.
std::string Dump(const std::string& url) {
  const char* bin = std::getenv("WEBHOOKD_TEST_PG_BIN");
  const std::string pg_dump =
      bin != nullptr && *bin != '\0' ? std::string(bin) + "/pg_dump" : "pg_dump";
  std::string dump =
      Run(pg_dump +
          " --schema-only --schema=webhookd --no-owner --no-privileges"
          " --exclude-table='webhookd.*_p[0-9]*' --dbname='" +
          url + "'");
  static const std::regex kRestrict(R"(^\\(un)?restrict .*\n)", std::regex::multiline);
  static const std::regex kVersions(R"(^-- Dumped (from database|by pg_dump) version .*\n)",
                                    std::regex::multiline);
  return std::regex_replace(std::regex_replace(dump, kRestrict, ""), kVersions, "");
}

TEST(LiveSchemaTest, SchemaSqlIsWhatTheMigrationsBuild) {
  testing::TestDatabase db;
  const std::string built = kHeader + Dump(db.url());
  ASSERT_NE(built.find("CREATE TABLE webhookd.deliveries"), std::string::npos) << built;
  // No day's partition made it in: the file does not change with the date.
  EXPECT_FALSE(std::regex_search(built, std::regex(R"(_p20\d{6})"))) << built;

  const std::string path = std::string(WEBHOOKD_SOURCE_DIR) + "/store/pg/schema.sql";
  if (const char* write = std::getenv("WEBHOOKD_WRITE_SCHEMA"); write && *write == '1') {
    std::ofstream(path, std::ios::binary) << built;
  }
  std::ifstream in(path, std::ios::binary);
  std::stringstream kept;
  kept << in.rdbuf();
  EXPECT_TRUE(kept.str() == built)
      << path << " is not what the migrations build: write it again with "
      << "WEBHOOKD_WRITE_SCHEMA=1 build-test/tests/store/pg/pg_tests "
         "--gtest_filter='LiveSchema*' and read the difference in git diff";
}

}  // namespace
}  // namespace webhookd::live_schema_pgtest
