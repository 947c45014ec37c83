// Attacks on the keys: a bootstrap admin key that was revoked or has expired must not come
// back with a restart (it did: start-up un-revoked it, and cleared an expiry), and a short
// one is refused.
#include <gtest/gtest.h>

#include <regex>

#include "tests/testing/process.h"
#include "tests/testing/test_database.h"
#include "tests/testing/webhookd_process.h"

namespace webhookd::testing::keys_security_test {
namespace {

using namespace std::chrono_literals;

TEST(KeysSecurityTest, ARevokedBootstrapKeyStaysRevokedAndStartUpFails) {
  TestDatabase db;
  std::string key_id;
  std::string bootstrap;
  {
    WebhookdProcess webhookd(db.url(), "server");
    bootstrap = webhookd.admin_key();
    ASSERT_EQ(webhookd.Call("GET", "/v1/destinations").status, 200);
    auto [code, list] = WebhookdProcess::RunCommand({"keys", "list"}, {{"DATABASE_URL", db.url()}});
    ASSERT_EQ(code, 0) << list;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(list, m, std::regex(R"((key_[0-9]+)\s+admin\s.*bootstrap)")))
        << list;
    key_id = m.str(1);
    auto [revoked, out] =
        WebhookdProcess::RunCommand({"keys", "revoke", key_id}, {{"DATABASE_URL", db.url()}});
    ASSERT_EQ(revoked, 0) << out;
    EXPECT_EQ(webhookd.Call("GET", "/v1/destinations").status, 401);
  }

  // Restarted with the same key: it does not start, and says why in one line.
  const std::string log = TestLogDir() + "/keys-security-restart.log";
  Process restarted({WebhookdBinary(), "server"},
                    {{"DATABASE_URL", db.url()},
                     {"WEBHOOKD_ADDR", "127.0.0.1:" + std::to_string(FreePort())},
                     {"WEBHOOKD_BOOTSTRAP_ADMIN_KEY", bootstrap}},
                    log);
  EXPECT_EQ(restarted.Wait(10s), 1);
  const std::string said = ReadFile(log);
  EXPECT_NE(said.find("WEBHOOKD_BOOTSTRAP_ADMIN_KEY: this key was revoked and stays revoked"),
            std::string::npos)
      << said;
  EXPECT_EQ(said.find(bootstrap), std::string::npos) << "the key was echoed";
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM api_keys WHERE revoked_at IS NULL"), "0");
}

TEST(KeysSecurityTest, AnExpiredBootstrapKeyStaysExpiredAndStartUpFails) {
  TestDatabase db;
  std::string bootstrap;
  {
    WebhookdProcess webhookd(db.url(), "server");
    bootstrap = webhookd.admin_key();
    ASSERT_EQ(webhookd.Call("GET", "/v1/destinations").status, 200);
    ASSERT_EQ(db.Scalar("UPDATE api_keys SET expires_at = now() - interval '1 minute' "
                        "WHERE name = 'bootstrap' RETURNING 'expired'"),
              "expired");
    EXPECT_EQ(webhookd.Call("GET", "/v1/destinations").status, 401);
  }

  const std::string log = TestLogDir() + "/keys-security-expired.log";
  Process restarted({WebhookdBinary(), "server"},
                    {{"DATABASE_URL", db.url()},
                     {"WEBHOOKD_ADDR", "127.0.0.1:" + std::to_string(FreePort())},
                     {"WEBHOOKD_BOOTSTRAP_ADMIN_KEY", bootstrap}},
                    log);
  EXPECT_EQ(restarted.Wait(10s), 1);
  const std::string said = ReadFile(log);
  EXPECT_NE(said.find("WEBHOOKD_BOOTSTRAP_ADMIN_KEY: this key has expired and stays expired"),
            std::string::npos)
      << said;
  EXPECT_EQ(said.find(bootstrap), std::string::npos) << "the key was echoed";
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM api_keys WHERE expires_at IS NULL"), "0");
}

TEST(KeysSecurityTest, AShortBootstrapKeyIsRefused) {
  TestDatabase db;
  const std::string log = TestLogDir() + "/keys-security-short.log";
  Process p({WebhookdBinary(), "server"},
            {{"DATABASE_URL", db.url()},
             {"WEBHOOKD_ADDR", "127.0.0.1:" + std::to_string(FreePort())},
             {"WEBHOOKD_BOOTSTRAP_ADMIN_KEY", "whk_only_twenty_chars_x"}},
            log);
  EXPECT_EQ(p.Wait(10s), 2);
  EXPECT_NE(ReadFile(log).find("WEBHOOKD_BOOTSTRAP_ADMIN_KEY: expected 32 to 256"),
            std::string::npos)
      << ReadFile(log);
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM api_keys"), "0");
}

}  // namespace
}  // namespace webhookd::testing::keys_security_test
