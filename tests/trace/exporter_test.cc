#include "trace/exporter.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <nlohmann/json.hpp>

#include "tests/testing/wait.h"
#include "tests/trace/sample_spans.h"

namespace webhookd::trace::exporter_test {
namespace {

using namespace std::chrono_literals;
using Json = nlohmann::json;
using TimePoint = WaitClock::TimePoint;
using webhookd::testing::WaitUntil;

// Time that moves only when told: Advance, or, with auto_advance, any timed wait, which
// then ends at once at its deadline. Untimed waits (an empty queue) wait for a notify.
class FakeWaitClock final : public WaitClock {
 public:
  static constexpr TimePoint kStart = TimePoint(1000h);

  TimePoint Now() override {
    std::lock_guard lock(mu_);
    return now_;
  }

  void WaitUntil(std::condition_variable& cv, std::unique_lock<std::mutex>& lock,
                 TimePoint deadline) override {
    const Waiter me{&cv, lock.mutex(), deadline};
    {
      std::lock_guard guard(mu_);
      if (now_ >= deadline) return;
      if (auto_advance_ && deadline != TimePoint::max()) {
        now_ = deadline;
        return;
      }
      waiters_.push_back(me);
    }
    // Advance takes the caller's mutex before it notifies, so no wake-up falls between
    // the check above and this wait.
    cv.wait(lock);
    std::lock_guard guard(mu_);
    waiters_.erase(std::find(waiters_.begin(), waiters_.end(), me));
  }

  void Advance(std::chrono::nanoseconds d) {
    std::vector<Waiter> waiting;
    {
      std::lock_guard guard(mu_);
      now_ += d;
      waiting = waiters_;
    }
    for (const Waiter& w : waiting) {
      std::lock_guard guard(*w.mu);
      w.cv->notify_all();
    }
  }

  // From now on every timed wait ends at once at its deadline. A wait already under way
  // goes on until a notify; WakeAndAutoAdvance also ends it.
  void set_auto_advance(bool on) {
    std::lock_guard guard(mu_);
    auto_advance_ = on;
  }
  // Whether a thread waits for a time (rather than for a notify alone).
  bool HasTimedWaiter() {
    std::lock_guard guard(mu_);
    return std::any_of(waiters_.begin(), waiters_.end(),
                       [](const Waiter& w) { return w.deadline != TimePoint::max(); });
  }
  void WakeAndAutoAdvance() {
    set_auto_advance(true);
    Advance(std::chrono::nanoseconds(0));
  }

 private:
  struct Waiter {
    std::condition_variable* cv;
    std::mutex* mu;
    TimePoint deadline;
    bool operator==(const Waiter&) const = default;
  };
  std::mutex mu_;
  TimePoint now_ = kStart;
  bool auto_advance_ = false;
  std::vector<Waiter> waiters_;
};

struct Request {
  std::string url;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string content_type;
  std::string body;
  std::chrono::milliseconds timeout;
  TimePoint at;

  // The span names of a JSON body.
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    const Json request = Json::parse(body);
    for (const auto& span : request["resourceSpans"][0]["scopeSpans"][0]["spans"]) {
      out.push_back(span["name"]);
    }
    return out;
  }
};

TransportAnswer Status(int status, std::optional<std::chrono::milliseconds> retry_after = {}) {
  return TransportAnswer{status, retry_after};
}

// Records every request and answers from a script (the last answer repeats). It can be
// held, so that a Post does not return until released, or made to hang until Cancel.
class FakeTransport final : public OtlpTransport {
 public:
  struct State {
    std::mutex mu;
    std::condition_variable cv;
    std::vector<Request> requests;
    std::deque<Result<TransportAnswer>> script{Status(200)};
    bool held = false;
    bool hang = false;
    bool cancelled = false;
    int in_post = 0;
  };

  FakeTransport(std::shared_ptr<State> state, WaitClock& clock)
      : state_(std::move(state)), clock_(clock) {}

  Result<TransportAnswer> Post(const std::string& url,
                               const std::vector<std::pair<std::string, std::string>>& headers,
                               std::string_view content_type, const std::string& body,
                               std::chrono::milliseconds timeout) override {
    const TimePoint at = clock_.Now();
    std::unique_lock lock(state_->mu);
    state_->requests.push_back({url, headers, std::string(content_type), body, timeout, at});
    ++state_->in_post;
    state_->cv.notify_all();
    state_->cv.wait(lock, [&] { return !state_->held || state_->cancelled; });
    if (state_->hang) state_->cv.wait(lock, [&] { return state_->cancelled; });
    --state_->in_post;
    if (state_->cancelled) return Fail(ErrorKind::kUnavailable, "cancelled");
    Result<TransportAnswer> answer = state_->script.front();
    if (state_->script.size() > 1) state_->script.pop_front();
    return answer;
  }

  void Cancel() override {
    std::lock_guard lock(state_->mu);
    state_->cancelled = true;
    state_->cv.notify_all();
  }

 private:
  std::shared_ptr<State> state_;
  WaitClock& clock_;
};

class ExporterTest : public ::testing::Test {
 protected:
  ExporterTest() {
    options_.endpoint = "http://collector:4318/v1/traces";
    options_.headers = {{"api-key", "secret-value"}};
    options_.protocol = OtlpProtocol::kHttpJson;  // the tests read span names from bodies
    options_.resource = samples::SampleResource();
    options_.schedule_delay = 5s;
    options_.max_queue_size = 100;
    options_.max_export_batch_size = 10;
  }

  void Start(WaitClock& clock) {
    exporter_ = std::make_unique<OtlpExporter>(
        options_, std::make_unique<FakeTransport>(state_, clock), exported_, dropped_, clock);
  }
  void Start() { Start(clock_); }

  void Emit(const std::string& name) {
    Span s = samples::ClientSpan();
    s.name = name;
    exporter_->Emit(std::move(s));
  }

  std::vector<Request> requests() {
    std::lock_guard lock(state_->mu);
    return state_->requests;
  }

  void Script(std::vector<Result<TransportAnswer>> answers) {
    std::lock_guard lock(state_->mu);
    state_->script.assign(answers.begin(), answers.end());
  }

  bool WaitForRequests(size_t n) {
    return WaitUntil([&] { return requests().size() >= n; }, 10s, 1ms);
  }

  // Lets a moment of real time pass: for checks that something did not happen.
  static void Settle() { std::this_thread::sleep_for(50ms); }

  ExporterOptions options_;
  FakeWaitClock clock_;
  std::shared_ptr<FakeTransport::State> state_ = std::make_shared<FakeTransport::State>();
  Counter exported_;
  Counter dropped_;
  std::unique_ptr<OtlpExporter> exporter_;
};

TEST_F(ExporterTest, FullBatchesGoAtOnceAndTheRestAfterTheScheduleDelay) {
  options_.max_export_batch_size = 3;
  Start();
  for (int i = 0; i < 7; ++i) Emit("s" + std::to_string(i));
  ASSERT_TRUE(WaitForRequests(2));
  Settle();
  auto sent = requests();
  ASSERT_EQ(sent.size(), 2u);  // the seventh span waits for its delay
  EXPECT_THAT(sent[0].names(), ::testing::ElementsAre("s0", "s1", "s2"));
  EXPECT_THAT(sent[1].names(), ::testing::ElementsAre("s3", "s4", "s5"));
  EXPECT_EQ(sent[0].at, FakeWaitClock::kStart);

  clock_.Advance(5s);
  ASSERT_TRUE(WaitForRequests(3));
  EXPECT_THAT(requests()[2].names(), ::testing::ElementsAre("s6"));
  ASSERT_TRUE(WaitUntil([&] { return exported_.value() == 7; }, 10s, 1ms));
  EXPECT_EQ(dropped_.value(), 0u);
}

TEST_F(ExporterTest, APartialBatchWaitsExactlyTheScheduleDelay) {
  Start();
  Emit("a");
  clock_.Advance(2s);
  Emit("b");  // the delay runs from the first span queued
  clock_.Advance(2999ms);
  Settle();
  EXPECT_TRUE(requests().empty());
  clock_.Advance(1ms);
  ASSERT_TRUE(WaitForRequests(1));
  EXPECT_THAT(requests()[0].names(), ::testing::ElementsAre("a", "b"));
  EXPECT_EQ(requests()[0].at, FakeWaitClock::kStart + 5s);
}

TEST_F(ExporterTest, AFullQueueDropsAndCountsExactly) {
  options_.max_queue_size = 4;
  options_.max_export_batch_size = 4;
  state_->held = true;
  Start();
  for (int i = 0; i < 4; ++i) Emit("first" + std::to_string(i));
  ASSERT_TRUE(WaitUntil(
      [&] {
        std::lock_guard lock(state_->mu);
        return state_->in_post == 1;
      },
      10s, 1ms));
  // The thread holds the first four in its POST: the queue takes four more, then drops.
  for (int i = 0; i < 7; ++i) Emit("second" + std::to_string(i));
  EXPECT_EQ(dropped_.value(), 3u);
  {
    std::lock_guard lock(state_->mu);
    state_->held = false;
    state_->cv.notify_all();
  }
  ASSERT_TRUE(WaitUntil([&] { return exported_.value() == 8; }, 10s, 1ms));
  EXPECT_THAT(requests()[1].names(),
              ::testing::ElementsAre("second0", "second1", "second2", "second3"));
  EXPECT_EQ(dropped_.value(), 3u);
}

TEST_F(ExporterTest, PostsProtobufWithTheConfiguredHeadersAndTimeout) {
  options_.protocol = OtlpProtocol::kHttpProtobuf;
  options_.timeout = 2500ms;
  options_.max_export_batch_size = 2;
  Start();
  exporter_->Emit(samples::ServerSpan());
  exporter_->Emit(samples::ClientSpan());
  ASSERT_TRUE(WaitForRequests(1));
  const Request r = requests()[0];
  EXPECT_EQ(r.url, "http://collector:4318/v1/traces");
  EXPECT_EQ(r.content_type, "application/x-protobuf");
  EXPECT_EQ(r.body, EncodeProtobuf({samples::ServerSpan(), samples::ClientSpan()},
                                   samples::SampleResource()));
  EXPECT_THAT(r.headers, ::testing::ElementsAre(::testing::Pair("api-key", "secret-value")));
  EXPECT_EQ(r.timeout, 2500ms);
}

TEST_F(ExporterTest, PostsJsonWhenAsked) {
  options_.max_export_batch_size = 1;
  Start();
  exporter_->Emit(samples::ServerSpan());
  ASSERT_TRUE(WaitForRequests(1));
  EXPECT_EQ(requests()[0].content_type, "application/json");
  EXPECT_EQ(requests()[0].body, EncodeJson({samples::ServerSpan()}, samples::SampleResource()));
}

TEST_F(ExporterTest, RetriesA503AfterASecondThenCountsTheSuccess) {
  Script({Status(503), Status(200)});
  options_.max_export_batch_size = 2;
  Start();
  Emit("a");  // the clock stands still until both are queued: they go as one batch
  Emit("b");
  clock_.WakeAndAutoAdvance();
  ASSERT_TRUE(WaitUntil([&] { return exported_.value() == 2; }, 10s, 1ms));
  const auto sent = requests();
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(sent[1].at - sent[0].at, 1s);
  EXPECT_EQ(sent[1].body, sent[0].body);
  EXPECT_EQ(dropped_.value(), 0u);
}

TEST_F(ExporterTest, RetriesEveryRetryableAnswerAndTransportErrors) {
  clock_.set_auto_advance(true);
  Script({Status(429), Status(502), Status(504), Fail(ErrorKind::kUnavailable, "refused"),
          Status(204)});
  options_.max_export_batch_size = 1;
  Start();
  Emit("a");
  ASSERT_TRUE(WaitUntil([&] { return exported_.value() == 1; }, 10s, 1ms));
  EXPECT_EQ(requests().size(), 5u);
  EXPECT_EQ(dropped_.value(), 0u);
}

TEST_F(ExporterTest, BacksOffExponentiallyAndGivesUpAfterFiveTries) {
  Script({Status(503)});
  options_.max_export_batch_size = 2;
  Start();
  Emit("a");
  Emit("b");
  clock_.WakeAndAutoAdvance();
  ASSERT_TRUE(WaitUntil([&] { return dropped_.value() == 2; }, 10s, 1ms));
  const auto sent = requests();
  ASSERT_EQ(sent.size(), 5u);
  std::vector<std::chrono::nanoseconds> gaps;
  for (size_t i = 1; i < sent.size(); ++i) gaps.push_back(sent[i].at - sent[i - 1].at);
  EXPECT_THAT(gaps, ::testing::ElementsAre(1s, 2s, 4s, 8s));
  EXPECT_EQ(exported_.value(), 0u);
}

TEST_F(ExporterTest, HonorsRetryAfter) {
  clock_.set_auto_advance(true);
  Script({Status(429, 7s), Status(503, 0ms), Status(200)});
  options_.max_export_batch_size = 1;
  Start();
  Emit("a");
  ASSERT_TRUE(WaitUntil([&] { return exported_.value() == 1; }, 10s, 1ms));
  const auto sent = requests();
  ASSERT_EQ(sent.size(), 3u);
  EXPECT_EQ(sent[1].at - sent[0].at, 7s);
  EXPECT_EQ(sent[2].at - sent[1].at, 0s);
}

TEST_F(ExporterTest, ARetryAfterPastTheExportTimeoutDropsAtOnce) {
  clock_.set_auto_advance(true);
  Script({Status(503, 60s), Status(200)});
  options_.max_export_batch_size = 1;
  Start();
  Emit("a");
  ASSERT_TRUE(WaitUntil([&] { return dropped_.value() == 1; }, 10s, 1ms));
  ASSERT_EQ(requests().size(), 1u);
  EXPECT_EQ(clock_.Now(), FakeWaitClock::kStart);  // it did not wait for nothing
}

TEST_F(ExporterTest, TheExportTimeoutBoundsRetriesAndEachPost) {
  clock_.set_auto_advance(true);
  Script({Status(503)});
  options_.max_export_batch_size = 1;
  options_.export_timeout = 2500ms;
  Start();
  Emit("a");
  ASSERT_TRUE(WaitUntil([&] { return dropped_.value() == 1; }, 10s, 1ms));
  const auto sent = requests();
  ASSERT_EQ(sent.size(), 2u);  // at 0 s and 1 s; the next, at 3 s, is past 2.5 s
  EXPECT_EQ(sent[0].timeout, 2500ms);
  EXPECT_EQ(sent[1].timeout, 1500ms);
}

TEST_F(ExporterTest, OtherAnswersDropTheBatchAndTheExporterGoesOn) {
  clock_.set_auto_advance(true);
  Script(
      {Status(400), Status(401), Status(404), Status(413), Status(500), Status(301), Status(200)});
  options_.max_export_batch_size = 1;
  ::testing::internal::CaptureStderr();
  Start();
  for (int i = 0; i < 7; ++i) {
    Emit("s" + std::to_string(i));
    ASSERT_TRUE(WaitForRequests(i + 1));
  }
  ASSERT_TRUE(WaitUntil([&] { return exported_.value() == 1; }, 10s, 1ms));
  exporter_->Shutdown(1s);
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(requests().size(), 7u);
  EXPECT_EQ(dropped_.value(), 6u);
  EXPECT_THAT(log, ::testing::HasSubstr("\"status\":400"));
  EXPECT_THAT(log, ::testing::HasSubstr("\"status\":500"));
  EXPECT_THAT(log, ::testing::Not(::testing::HasSubstr("secret-value")));
  EXPECT_THAT(log, ::testing::Not(::testing::HasSubstr("collector:4318")));
}

TEST_F(ExporterTest, TheSameFailureIsLoggedOnce) {
  clock_.set_auto_advance(true);
  Script({Status(401)});
  options_.max_export_batch_size = 1;
  ::testing::internal::CaptureStderr();
  Start();
  for (int i = 0; i < 3; ++i) {
    Emit("s" + std::to_string(i));
    ASSERT_TRUE(WaitForRequests(i + 1));
  }
  ASSERT_TRUE(WaitUntil([&] { return dropped_.value() == 3; }, 10s, 1ms));
  exporter_->Shutdown(1s);
  const std::string log = ::testing::internal::GetCapturedStderr();
  size_t lines = 0;
  for (size_t at = 0; (at = log.find("trace export dropped spans", at)) != std::string::npos;
       ++at) {
    ++lines;
  }
  EXPECT_EQ(lines, 1u) << log;
}

TEST_F(ExporterTest, ShutdownExportsWhatIsQueued) {
  options_.max_export_batch_size = 3;
  Start();
  for (int i = 0; i < 7; ++i) Emit("s" + std::to_string(i));
  ASSERT_TRUE(WaitForRequests(2));
  exporter_->Shutdown(1s);  // the clock never moves: only the shutdown sends the last one
  EXPECT_EQ(exported_.value(), 7u);
  ASSERT_EQ(requests().size(), 3u);
  EXPECT_THAT(requests()[2].names(), ::testing::ElementsAre("s6"));

  Emit("late");
  EXPECT_EQ(dropped_.value(), 1u);  // a shut-down exporter takes no more
  exporter_->Shutdown(1s);          // and a second shutdown is harmless
  EXPECT_EQ(requests().size(), 3u);
}

TEST_F(ExporterTest, ShutdownWithAFailingCollectorEndsByItsDeadline) {
  Script({Status(503)});
  options_.max_export_batch_size = 100;
  Start();
  for (int i = 0; i < 3; ++i) Emit("s" + std::to_string(i));
  // The thread waits for the schedule delay, which the clock will never reach by itself.
  ASSERT_TRUE(WaitUntil([&] { return clock_.HasTimedWaiter(); }, 10s, 1ms));
  EXPECT_TRUE(requests().empty());
  clock_.set_auto_advance(true);  // for the retries' backoff, from now on
  const auto real_start = std::chrono::steady_clock::now();
  exporter_->Shutdown(2500ms);
  EXPECT_LT(std::chrono::steady_clock::now() - real_start, 2s);
  // Tries at 0 s and 1 s; the next, at 3 s, would be past the deadline.
  const auto sent = requests();
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(sent[0].timeout, 2500ms);
  EXPECT_EQ(sent[1].timeout, 1500ms);
  EXPECT_LE(clock_.Now(), FakeWaitClock::kStart + 2500ms);
  EXPECT_EQ(dropped_.value(), 3u);
  EXPECT_EQ(exported_.value(), 0u);
}

TEST_F(ExporterTest, ShutdownCancelsACollectorThatNeverAnswers) {
  state_->hang = true;
  options_.max_export_batch_size = 1;
  Start(SteadyWaitClock());
  Emit("a");
  ASSERT_TRUE(WaitForRequests(1));
  const auto start = std::chrono::steady_clock::now();
  exporter_->Shutdown(200ms);
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_GE(took, 150ms);
  EXPECT_LT(took, 2s);
  EXPECT_TRUE(state_->cancelled);
  EXPECT_EQ(dropped_.value(), 1u);
}

TEST_F(ExporterTest, DestroyingWithoutShutdownDropsWhatIsQueued) {
  Start();
  for (int i = 0; i < 3; ++i) Emit("s" + std::to_string(i));
  exporter_.reset();
  EXPECT_TRUE(requests().empty());
  EXPECT_EQ(dropped_.value(), 3u);
}

}  // namespace
}  // namespace webhookd::trace::exporter_test
