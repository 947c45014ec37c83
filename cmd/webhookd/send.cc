#include "cmd/webhookd/send.h"

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <thread>

#include "base/duration.h"
#include "base/strings.h"
#include "client/batch_line.h"
#include "client/http_transport.h"
#include "client/publisher.h"
#include "client/result_line.h"
#include "cmd/webhookd/cli.h"
#include "core/trace_context.h"

namespace webhookd::cmd {
namespace {

using client::ApiUrl;
using client::BadLineResultLine;
using client::Event;
using client::HttpTransport;
using client::ParseApiUrl;
using client::ParseBatchLine;
using client::Publisher;
using client::PublishResult;
using client::RealSleeper;
using client::ResultLine;
using client::RetryBudget;
using client::RetryOptions;
using client::RetrySchedule;

constexpr const char* kHelp = R"(Usage:
  webhookd send --type T [--tenant T] [--destination ID] [--idempotency-key K]
                [--ordering-key O] [--subject S ...] [--traceparent TP [--tracestate TS]]
                [--data JSON | --data-file F]
  webhookd send --batch F [--concurrency N]

Publishes events to webhookd's API (POST /v1/events), retrying what is worth retrying.
With --type it publishes one event whose payload, a JSON object, is --data, the contents
of --data-file, or stdin. With --batch it publishes every line of F ("-" reads stdin),
each a JSON object {"type", "payload", "tenant_id"?, "destination_id"?,
"idempotency_key"?, "ordering_key"?, "subjects"?}, N at a time. A payload's bytes are sent exactly as given.

Every event carries an Idempotency-Key (the one given, else a random one made once per
event), so a retry never publishes an event twice. Connection failures, timeouts, 408,
409, 429 and 5xx are retried, up to --max-attempts requests per event, after a random
wait of up to min(--max-wait, 200ms x 2^attempt), and never sooner than a Retry-After (an
event whose Retry-After exceeds --max-wait gives up at once). Other 4xx are not retried.
Once retries exceed 20% of the requests of the last 10s (after the first 10 requests),
failures are reported without retrying, so a batch cannot swamp a struggling API.

Options:
  --type T               the event type
  --tenant T             the event's tenant_id
  --destination ID       deliver to this destination only
  --idempotency-key K    the event's Idempotency-Key (1-255 visible ASCII characters)
  --ordering-key O       the event's ordering_key: fifo destinations deliver the events of
                         one key one at a time, in order
  --subject S            a person or thing the payload is about ("user:42"; repeat for more,
                         at most 16): found by GET /v1/events?subject=S and erased by
                         POST /v1/subjects/erase (docs/privacy.md); never sent to receivers
  --traceparent TP       a W3C traceparent: the event joins that trace, and so does every
                         attempt to deliver it (docs/tracing.md)
  --tracestate TS        the W3C tracestate that goes with --traceparent
  --data JSON            the payload
  --data-file F          the payload, read from the file F
  --batch F              events, one JSON object a line; blank lines are skipped
  --concurrency N        events in flight at once with --batch (default 16)
  --max-attempts N       requests per event at most, the first included (default 6)
  --max-wait D           the longest wait between two attempts (default 10s; e.g. 250ms)

Output: one line of JSON per event on stdout, in input order: the API's 202 answer, or
{"error", "status", "attempts", "idempotency_key", "line"} ("line" with --batch). A
summary goes to stderr.
Exit status: 0 all accepted; 1 some refused (a 4xx, or a batch line that is not a valid
event); 3 some gave up (3 wins over 1); 2 a bad flag or environment variable.

Environment:
  WEBHOOKD_URL       the API (default http://127.0.0.1:8080)
  WEBHOOKD_API_KEY   a publisher or admin key (required; never printed)
)";

constexpr int kMaxConcurrency = 1024;
constexpr int kMaxAttempts = 100;

struct SendOptions {
  std::map<std::string, std::string> single;  // --type, --tenant, ... as given
  std::vector<std::string> subjects;          // each --subject, in order
  std::optional<std::string> batch;
  int concurrency = 16;
  RetryOptions retry;
};

// A usage error: the message names the flag or variable and what it expected.
struct UsageError {
  std::string message;
};

const std::vector<std::string> kSingleFlags = {
    "--type",        "--tenant",     "--destination", "--idempotency-key", "--ordering-key",
    "--traceparent", "--tracestate", "--data",        "--data-file"};
const std::vector<std::string> kOtherFlags = {"--batch", "--concurrency", "--max-attempts",
                                              "--max-wait"};

std::optional<int> ParseCount(const std::string& text, int max) {
  if (text.empty() || text.size() > 9) return std::nullopt;
  int n = 0;
  for (const char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + (c - '0');
  }
  if (n < 1 || n > max) return std::nullopt;
  return n;
}

std::expected<SendOptions, UsageError> ParseOptions(const std::vector<std::string>& args) {
  std::vector<std::string> known = kSingleFlags;
  known.insert(known.end(), kOtherFlags.begin(), kOtherFlags.end());
  auto flags = ParseFlagList(args, FlagSpec{known, {}, /*positional=*/false, {"--subject"}});
  if (!flags) return std::unexpected(UsageError{flags.error()});
  const std::map<std::string, std::string>& values = flags->values;

  SendOptions options;
  if (auto it = flags->repeated.find("--subject"); it != flags->repeated.end()) {
    options.subjects = it->second;
  }
  for (const auto& [flag, value] : values) {
    if (flag == "--batch") {
      options.batch = value;
    } else if (flag == "--concurrency") {
      auto n = ParseCount(value, kMaxConcurrency);
      if (!n) {
        return std::unexpected(UsageError{"--concurrency: expected an integer from 1 to " +
                                          std::to_string(kMaxConcurrency) + ", got \"" + value +
                                          "\""});
      }
      options.concurrency = *n;
    } else if (flag == "--max-attempts") {
      auto n = ParseCount(value, kMaxAttempts);
      if (!n) {
        return std::unexpected(UsageError{"--max-attempts: expected an integer from 1 to " +
                                          std::to_string(kMaxAttempts) + ", got \"" + value +
                                          "\""});
      }
      options.retry.max_attempts = *n;
    } else if (flag == "--max-wait") {
      auto d = ParseDuration(value);
      if (!d) {
        return std::unexpected(UsageError{
            "--max-wait: expected a duration such as 250ms or 10s, got \"" + value + "\""});
      }
      options.retry.max_wait = *d;
    } else {
      options.single[flag] = value;
    }
  }
  if (options.batch) {
    if (!options.subjects.empty()) {
      return std::unexpected(UsageError{"--subject: cannot be combined with --batch"});
    }
    if (!options.single.empty()) {
      return std::unexpected(
          UsageError{options.single.begin()->first + ": cannot be combined with --batch"});
    }
  } else {
    if (!options.single.contains("--type"))
      return std::unexpected(UsageError{"--type: required (or --batch F for a file of events)"});
    if (options.single.contains("--data") && options.single.contains("--data-file"))
      return std::unexpected(UsageError{"--data-file: cannot be combined with --data"});
  }
  return options;
}

bool IsJsonObject(std::string_view text) {
  return text.starts_with('{') && nlohmann::json::accept(text);
}

std::optional<std::string> ReadAll(std::istream& in) {
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return std::nullopt;
  return std::move(text).str();
}

// The event of the single-event form, or a usage error naming where the payload came from.
std::expected<Event, UsageError> SingleEvent(const std::map<std::string, std::string>& flags,
                                             std::istream& in) {
  Event event;
  event.type = flags.at("--type");
  if (auto it = flags.find("--tenant"); it != flags.end()) event.tenant_id = it->second;
  if (auto it = flags.find("--destination"); it != flags.end()) event.destination_id = it->second;
  if (auto it = flags.find("--idempotency-key"); it != flags.end())
    event.idempotency_key = it->second;
  if (auto it = flags.find("--ordering-key"); it != flags.end()) event.ordering_key = it->second;
  if (auto it = flags.find("--traceparent"); it != flags.end()) {
    if (!ParseTraceparent(it->second)) {
      return std::unexpected(
          UsageError{"--traceparent: expected a W3C traceparent, e.g. "
                     "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"});
    }
    event.traceparent = it->second;
  }
  if (auto it = flags.find("--tracestate"); it != flags.end()) {
    if (!event.traceparent) {
      return std::unexpected(UsageError{"--tracestate: needs --traceparent"});
    }
    if (ValidTracestate(it->second).empty()) {
      return std::unexpected(UsageError{"--tracestate: expected a W3C tracestate (key=value,...)"});
    }
    event.tracestate = it->second;
  }

  std::string source;
  std::optional<std::string> text;
  if (auto it = flags.find("--data"); it != flags.end()) {
    source = "--data";
    text = it->second;
  } else if (auto it = flags.find("--data-file"); it != flags.end()) {
    source = "--data-file";
    std::ifstream file(it->second, std::ios::binary);
    if (!file)
      return std::unexpected(UsageError{"--data-file: cannot read \"" + it->second + "\""});
    text = ReadAll(file);
    if (!text)
      return std::unexpected(UsageError{"--data-file: cannot read \"" + it->second + "\""});
  } else {
    source = "stdin";
    text = ReadAll(in);
    if (!text) return std::unexpected(UsageError{"stdin: cannot read the payload"});
  }
  // Whitespace around the object is not part of the payload's value.
  const std::string_view payload = Trim(*text, " \t\r\n");
  if (!IsJsonObject(payload))
    return std::unexpected(UsageError{source + ": expected the payload, a JSON object"});
  event.payload = std::string(payload);
  return event;
}

struct Tally {
  std::atomic<int> accepted{0};
  std::atomic<int> refused{0};
  std::atomic<int> gave_up{0};
  std::atomic<int64_t> requests{0};

  void Count(const PublishResult& result) {
    requests += result.attempts;
    switch (result.outcome) {
      case PublishResult::Outcome::kAccepted:
        ++accepted;
        break;
      case PublishResult::Outcome::kRefused:
        ++refused;
        break;
      case PublishResult::Outcome::kGaveUp:
        ++gave_up;
        break;
    }
  }

  int ExitStatus() const { return gave_up > 0 ? 3 : refused > 0 ? 1 : 0; }

  std::string Summary() const {
    const int events = accepted + refused + gave_up;
    return "webhookd send: " + std::to_string(events) + (events == 1 ? " event: " : " events: ") +
           std::to_string(accepted) + " accepted, " + std::to_string(refused) + " refused, " +
           std::to_string(gave_up) + " gave up; " + std::to_string(requests) +
           (requests == 1 ? " request" : " requests");
  }
};

// Hands out the lines of a batch file, one at a time, to any thread.
class LineReader {
 public:
  explicit LineReader(std::istream& in) : in_(in) {}

  struct Item {
    size_t index;  // among events, from 0: the order of the output
    int line;      // in the file, from 1
    std::string text;
  };

  std::optional<Item> Next() {
    std::lock_guard lock(mu_);
    std::string text;
    while (std::getline(in_, text)) {
      ++line_;
      if (Trim(text, " \t\r\n").empty()) continue;
      return Item{index_++, line_, std::move(text)};
    }
    return std::nullopt;
  }

 private:
  std::mutex mu_;
  std::istream& in_;
  int line_ = 0;
  size_t index_ = 0;
};

// Writes lines in index order, whatever order they are finished in.
class OrderedWriter {
 public:
  explicit OrderedWriter(std::ostream& out) : out_(out) {}

  void Put(size_t index, std::string line) {
    std::lock_guard lock(mu_);
    pending_.emplace(index, std::move(line));
    while (!pending_.empty() && pending_.begin()->first == next_) {
      out_ << pending_.begin()->second << '\n';
      pending_.erase(pending_.begin());
      ++next_;
    }
    out_.flush();
  }

 private:
  std::mutex mu_;
  std::ostream& out_;
  std::map<size_t, std::string> pending_;
  size_t next_ = 0;
};

// Everything a publishing thread shares with the others.
struct Shared {
  ApiUrl api;
  std::string api_key;
  RetrySchedule schedule;
  SystemClock clock;
  SystemRandom random;
  RealSleeper sleeper;
  RetryBudget budget{clock};
};

void PublishBatch(Shared& shared, LineReader& reader, OrderedWriter& writer, Tally& tally) {
  HttpTransport transport(shared.api.origin, {});
  Publisher publisher(
      {transport, shared.schedule, shared.budget, shared.clock, shared.random, shared.sleeper},
      shared.api_key, shared.api.prefix + "/v1/events");
  while (auto item = reader.Next()) {
    auto event = ParseBatchLine(item->text);
    if (!event) {
      ++tally.refused;
      writer.Put(item->index, BadLineResultLine(event.error().message, item->line));
      continue;
    }
    const PublishResult result = publisher.Publish(*event);
    tally.Count(result);
    writer.Put(item->index, ResultLine(result, item->line));
  }
}

}  // namespace

int RunSend(const std::vector<std::string>& args, const std::map<std::string, std::string>& env,
            std::istream& in, std::ostream& out, std::ostream& err) {
  for (const auto& a : args) {
    if (a == "--help" || a == "-h") {
      out << kHelp;
      return 0;
    }
  }
  auto usage = [&err](const std::string& message) {
    err << "webhookd send: " << message << '\n';
    return 2;
  };
  auto options = ParseOptions(args);
  if (!options) return usage(options.error().message);

  auto get = [&env](const std::string& name) -> std::string {
    auto it = env.find(name);
    return it == env.end() ? "" : it->second;
  };
  std::string url = get("WEBHOOKD_URL");
  if (url.empty()) url = "http://127.0.0.1:8080";
  auto api = ParseApiUrl(url);
  if (!api) {
    // The value is not echoed: a key pasted into the wrong variable must not be printed.
    return usage("WEBHOOKD_URL: expected an http(s) URL such as http://127.0.0.1:8080 (" +
                 api.error().message + ")");
  }
  const std::string api_key = get("WEBHOOKD_API_KEY");
  if (api_key.empty()) {
    return usage("WEBHOOKD_API_KEY: required, the API key to publish with (publisher or admin)");
  }

  Shared shared{*api, api_key, RetrySchedule(options->retry), {}, {}, {}};
  Tally tally;
  if (!options->batch) {
    auto event = SingleEvent(options->single, in);
    if (event) event->subjects = options->subjects;
    if (!event) return usage(event.error().message);
    HttpTransport transport(shared.api.origin, {});
    Publisher publisher(
        {transport, shared.schedule, shared.budget, shared.clock, shared.random, shared.sleeper},
        shared.api_key, shared.api.prefix + "/v1/events");
    const PublishResult result = publisher.Publish(*event);
    tally.Count(result);
    out << ResultLine(result, std::nullopt) << '\n';
    out.flush();
  } else {
    std::ifstream file;
    std::istream* lines = &in;
    if (*options->batch != "-") {
      file.open(*options->batch, std::ios::binary);
      if (!file) return usage("--batch: cannot read \"" + *options->batch + "\"");
      lines = &file;
    }
    LineReader reader(*lines);
    OrderedWriter writer(out);
    std::vector<std::thread> threads;
    threads.reserve(static_cast<size_t>(options->concurrency));
    for (int i = 0; i < options->concurrency; ++i) {
      threads.emplace_back([&] { PublishBatch(shared, reader, writer, tally); });
    }
    for (auto& t : threads) t.join();
  }
  err << tally.Summary() << '\n';
  return tally.ExitStatus();
}

int RunSend(const std::vector<std::string>& args) {
  std::map<std::string, std::string> env;
  for (const char* name : {"WEBHOOKD_URL", "WEBHOOKD_API_KEY"}) {
    if (const char* value = std::getenv(name)) env[name] = value;
  }
  return RunSend(args, env, std::cin, std::cout, std::cerr);
}

}  // namespace webhookd::cmd
