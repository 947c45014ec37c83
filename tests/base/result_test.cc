#include "base/result.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace webhookd::result_test {
namespace {

Result<int> Parse(const std::string& s) {
  if (s.empty()) return Fail(ErrorKind::kMalformed, "empty");
  return std::stoi(s);
}

Result<void> Check(int n) {
  if (n < 0) return Fail(ErrorKind::kInvalid, "negative");
  return {};
}

Result<std::string> Twice(const std::string& s) {
  WEBHOOKD_ASSIGN_OR_RETURN(int n, Parse(s));
  WEBHOOKD_RETURN_IF_ERROR(Check(n));
  return std::to_string(2 * n);
}

Result<std::unique_ptr<int>> Boxed(int n) { return std::make_unique<int>(n); }

Result<int> Unbox(int n) {
  WEBHOOKD_ASSIGN_OR_RETURN(auto box, Boxed(n));  // move-only values move out
  WEBHOOKD_ASSIGN_OR_RETURN(auto again, Boxed(*box + 1));
  return *again;
}

Result<int> ViaPropagate(const std::string& s) {
  auto n = Parse(s);
  if (!n) return Propagate(n);
  return *n;
}

TEST(ResultTest, AssignOrReturnGivesTheValue) {
  EXPECT_EQ(Twice("21").value(), "42");
  EXPECT_EQ(Unbox(1).value(), 2);
}

TEST(ResultTest, AFailureIsReturnedUnchanged) {
  auto r = Twice("");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, ErrorKind::kMalformed);
  EXPECT_EQ(r.error().message, "empty");
  auto p = ViaPropagate("");
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error().message, "empty");
}

TEST(ResultTest, ReturnIfErrorStopsAtTheFirstFailure) {
  auto r = Twice("-3");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, ErrorKind::kInvalid);
  EXPECT_EQ(r.error().message, "negative");
}

}  // namespace
}  // namespace webhookd::result_test
