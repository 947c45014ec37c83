#include "core/outcome.h"

#include <gtest/gtest.h>

namespace webhookd::outcome_test {
namespace {

struct Row {
  int status;
  Outcome outcome;
};

TEST(OutcomeTest, ClassifiesEveryRowOfTheContract) {
  const Row rows[] = {
      {200, Outcome::kSuccess},   {201, Outcome::kSuccess},   {204, Outcome::kSuccess},
      {299, Outcome::kSuccess},   {100, Outcome::kPermanent}, {101, Outcome::kPermanent},
      {199, Outcome::kPermanent}, {300, Outcome::kPermanent}, {301, Outcome::kPermanent},
      {302, Outcome::kPermanent}, {304, Outcome::kPermanent}, {307, Outcome::kPermanent},
      {399, Outcome::kPermanent}, {400, Outcome::kPermanent}, {401, Outcome::kPermanent},
      {403, Outcome::kPermanent}, {404, Outcome::kPermanent}, {405, Outcome::kPermanent},
      {408, Outcome::kRetryable}, {409, Outcome::kPermanent}, {410, Outcome::kPermanent},
      {413, Outcome::kPermanent}, {422, Outcome::kPermanent}, {429, Outcome::kRetryable},
      {499, Outcome::kPermanent}, {500, Outcome::kRetryable}, {502, Outcome::kRetryable},
      {503, Outcome::kRetryable}, {504, Outcome::kRetryable}, {599, Outcome::kRetryable},
  };
  for (const Row& row : rows) {
    EXPECT_EQ(ClassifyStatus(row.status), row.outcome) << row.status;
  }
}

TEST(OutcomeTest, CodesOutsideTheRangeAreABrokenResponseAndRetryable) {
  for (int status : {-1, 0, 1, 99, 600, 999, 1000}) {
    EXPECT_EQ(ClassifyStatus(status), Outcome::kRetryable) << status;
  }
}

TEST(OutcomeTest, NamesMatchTheApi) {
  EXPECT_EQ(OutcomeName(Outcome::kSuccess), "success");
  EXPECT_EQ(OutcomeName(Outcome::kRetryable), "retryable");
  EXPECT_EQ(OutcomeName(Outcome::kPermanent), "permanent");
  EXPECT_EQ(OutcomeName(Outcome::kSkipped), "skipped");
  for (Outcome o :
       {Outcome::kSuccess, Outcome::kRetryable, Outcome::kPermanent, Outcome::kSkipped}) {
    EXPECT_EQ(ParseOutcome(OutcomeName(o)), o);
  }
  EXPECT_EQ(ParseOutcome("skip"), std::nullopt);
}

}  // namespace
}  // namespace webhookd::outcome_test
