#include "cmd/webhookd/cli.h"

#include <gtest/gtest.h>

namespace webhookd::cmd {
namespace {

const FlagSpec kSpec{{"--tenant", "--since"}, {"--all"}, /*positional=*/true};

TEST(CliTest, FlagsTakeTheNextArgumentOrTheirEqualsValue) {
  auto flags = ParseFlagList({"replay", "--tenant", "acme", "--since=1h", "--all", "7"}, kSpec);
  ASSERT_TRUE(flags) << flags.error();
  EXPECT_EQ(flags->values.at("--tenant"), "acme");
  EXPECT_EQ(flags->values.at("--since"), "1h");
  EXPECT_EQ(flags->values.at("--all"), "true");
  EXPECT_EQ(flags->positional, (std::vector<std::string>{"replay", "7"}));
  EXPECT_EQ(ParseFlagList({"--tenant="}, kSpec)->values.at("--tenant"), "");
}

TEST(CliTest, EachMistakeIsNamedFirst) {
  EXPECT_EQ(ParseFlagList({"--colour", "red"}, kSpec).error(), "--colour: unknown flag");
  EXPECT_EQ(ParseFlagList({"--tenant"}, kSpec).error(), "--tenant: expected a value");
  EXPECT_EQ(ParseFlagList({"--tenant", "a", "--tenant=b"}, kSpec).error(),
            "--tenant: given more than once");
  EXPECT_EQ(ParseFlagList({"--all=yes"}, kSpec).error(), "--all: takes no value");
  EXPECT_EQ(ParseFlagList({"--all", "--all"}, kSpec).error(), "--all: given more than once");
  EXPECT_EQ(ParseFlagList({"stray"}, FlagSpec{{"--tenant"}, {}, false}).error(),
            "unexpected argument \"stray\"");
}

}  // namespace
}  // namespace webhookd::cmd
