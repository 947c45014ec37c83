// store/pg/schema/ holds the one live definition of each function, trigger and view: no
// two files define the same object, every object of schema webhookd has its file, and
// applying the files after the migrations leaves the catalog the migrations built.
#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <set>
#include <string>

#include "store/pg/migrator.h"
#include "tests/testing/test_database.h"

namespace webhookd {
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

// Functions whose file changed them since the migrations, left out of the comparison:
// fan_out is new (the one fan-out rule) and publish() calls it.
constexpr const char* kChangedSinceTheMigrations = "'{fan_out,publish}'";

// What the catalog says of every function, trigger and view of schema webhookd: their
// definitions (with settings such as SECURITY DEFINER and search_path), owners, grants
// and comments.
std::string Catalog(TestDatabase& db) {
  return db.Scalar(
      "SELECT string_agg(d, E'\\n----\\n' ORDER BY d) FROM ("
      "  SELECT pg_get_functiondef(p.oid) || ' owner ' || p.proowner::regrole::text"
      "         || ' acl ' || coalesce(p.proacl::text, '-')"
      "         || ' comment ' || coalesce(obj_description(p.oid, 'pg_proc'), '-') AS d"
      "    FROM pg_proc p WHERE p.pronamespace = 'webhookd'::regnamespace"
      "     AND p.proname <> ALL (" +
      std::string(kChangedSinceTheMigrations) +
      ")"
      "  UNION ALL SELECT pg_get_triggerdef(t.oid) || ' enabled ' || t.tgenabled::text"
      "    FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid"
      "   WHERE NOT t.tgisinternal AND c.relnamespace = 'webhookd'::regnamespace"
      "  UNION ALL SELECT 'view ' || c.relname || ' ' || pg_get_viewdef(c.oid)"
      "         || ' owner ' || c.relowner::regrole::text || ' acl '"
      "         || coalesce(c.relacl::text, '-') || ' options '"
      "         || coalesce(c.reloptions::text, '-')"
      "    FROM pg_class c WHERE c.relkind = 'v'"
      "     AND c.relnamespace = 'webhookd'::regnamespace) s");
}

// Proves the files were taken whole from the migrations. The first definition changed in
// its file alone makes this differ on purpose: then compare with the squashed migrations
// that replace 0001-0034, or leave the changed objects out, naming them.
TEST(SchemaFilesTest, TheFilesLeaveTheCatalogTheMigrationsBuilt) {
  // The migrations alone, as `webhookd migrate` ran before there were schema files.
  TestDatabase before(false);
  ASSERT_TRUE(pg::Migrate(before.url(), pg::EmbeddedMigrations(), pg::Schema{"none", {}}));
  TestDatabase after(true);
  const std::string expected = Catalog(before);
  ASSERT_FALSE(expected.empty());
  EXPECT_EQ(Catalog(after), expected);
}

}  // namespace
}  // namespace webhookd
