#include "core/role.h"

#include <gtest/gtest.h>

namespace webhookd::role_test {
namespace {

TEST(RoleTest, NamesAreThoseOfTheCliAndTheDatabase) {
  EXPECT_EQ(RoleName(Role::kAdmin), "admin");
  EXPECT_EQ(RoleName(Role::kPublisher), "publisher");
  EXPECT_EQ(RoleName(Role::kTenant), "tenant");
  for (Role r : {Role::kAdmin, Role::kPublisher, Role::kTenant}) {
    EXPECT_EQ(ParseRole(RoleName(r)), r);
  }
}

TEST(RoleTest, AnythingElseIsNoRole) {
  for (const char* bad : {"", "Admin", "ADMIN", "admin ", "root", "publishers", "tenant:acme"}) {
    EXPECT_EQ(ParseRole(bad), std::nullopt) << bad;
  }
}

}  // namespace
}  // namespace webhookd::role_test
