// store/pg/schema/ holds the one live definition of each function, trigger and view: no
// two files define the same object, and every object of schema webhookd has its file.
// That the files and the baseline leave the catalog migrations 0001-0034 built is
// baseline_upgrade_pgtest's.
#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <set>
#include <string>

#include "store/pg/migrator.h"
#include "tests/testing/test_database.h"

namespace webhookd::schema_files_pgtest {
namespace {

using testing::TestDatabase;

// "function claim_due" -> the files whose text creates it.
std::map<std::string, std::set<std::string>> DefinedBy(const pg::Schema& schema) {
  static const std::regex kCreate(
      R"(CREATE\s+(?:OR\s+REPLACE\s+)?(FUNCTION|TRIGGER|VIEW)\s+(?:webhookd\.)?(\w+))",
      std::regex::icase);
  std::map<std::string, std::set<std::string>> defined;
  for (const auto& f : schema.files) {
    for (std::sregex_iterator it(f.sql.begin(), f.sql.end(), kCreate), end; it != end; ++it) {
      std::string kind = (*it)[1];
      for (char& c : kind) c = static_cast<char>(std::tolower(c));
      auto& files = defined[kind + " " + (*it)[2].str()];
      // A file creating the same object twice is two definitions too.
      EXPECT_TRUE(files.insert(f.name).second) << f.name << " defines " << kind << " twice";
    }
  }
  return defined;
}

TEST(SchemaFilesTest, NoTwoFilesDefineTheSameObject) {
  const auto defined = DefinedBy(pg::EmbeddedSchema());
  ASSERT_FALSE(defined.empty());
  for (const auto& [object, files] : defined) {
    std::string names;
    for (const auto& f : files) names += " " + f + ".sql";
    EXPECT_EQ(files.size(), 1u) << object << " is defined by" << names;
  }
}

TEST(SchemaFilesTest, ADuplicateDefinitionIsFound) {
  pg::Schema schema = pg::EmbeddedSchema();
  schema.files.push_back({"claim_due_copy", "CREATE OR REPLACE FUNCTION webhookd.claim_due()"});
  EXPECT_EQ(DefinedBy(schema).at("function claim_due").size(), 2u);
}

// Every function, trigger and view of schema webhookd, as the catalog lists them.
std::set<std::string> CatalogObjects(TestDatabase& db) {
  const std::string list = db.Scalar(
      "SELECT string_agg(o, ',' ORDER BY o) FROM ("
      "  SELECT 'function ' || proname AS o FROM pg_proc"
      "   WHERE pronamespace = 'webhookd'::regnamespace"
      "  UNION ALL SELECT 'trigger ' || tgname FROM pg_trigger t JOIN pg_class c"
      "    ON c.oid = t.tgrelid WHERE NOT tgisinternal"
      "     AND c.relnamespace = 'webhookd'::regnamespace"
      "  UNION ALL SELECT 'view ' || viewname FROM pg_views WHERE schemaname = 'webhookd') s");
  std::set<std::string> objects;
  std::string::size_type start = 0;
  while (start < list.size()) {
    const auto comma = list.find(',', start);
    objects.insert(list.substr(start, comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return objects;
}

TEST(SchemaFilesTest, EveryFunctionTriggerAndViewHasItsFile) {
  TestDatabase db(true);
  const auto defined = DefinedBy(pg::EmbeddedSchema());
  for (const auto& object : CatalogObjects(db)) {
    EXPECT_TRUE(defined.contains(object)) << object << " has no file in store/pg/schema/";
  }
  for (const auto& [object, files] : defined) {
    EXPECT_TRUE(CatalogObjects(db).contains(object)) << *files.begin() << ".sql: " << object;
  }
}

}  // namespace
}  // namespace webhookd::schema_files_pgtest
