#include "cmd/webhookd/cli.h"

#include <gtest/gtest.h>

namespace webhookd::cmd::cli_test {
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

TEST(CliTest, ARepeatableFlagKeepsEveryValueInOrder) {
  const FlagSpec spec{{"--type"}, {}, /*positional=*/false, {"--subject"}};
  auto flags = ParseFlagList({"--subject", "user:42", "--type", "a", "--subject=order:7"}, spec);
  ASSERT_TRUE(flags) << flags.error();
  EXPECT_EQ(flags->repeated.at("--subject"), (std::vector<std::string>{"user:42", "order:7"}));
  EXPECT_FALSE(flags->values.contains("--subject"));
  EXPECT_EQ(ParseFlagList({"--subject"}, spec).error(), "--subject: expected a value");
}

}  // namespace
}  // namespace webhookd::cmd::cli_test
