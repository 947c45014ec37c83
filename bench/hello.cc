// bench_hello: the ingest bound. A cpp-httplib server configured like webhookd's API
// that answers every POST /v1/events with a 202 and a body shaped like webhookd's,
// touching no database.
#include "bench/bench_util.h"

namespace {

constexpr const char* kUsage = R"(Usage: bench_hello [--port N] [--threads 128] [--backlog 0]
  Answers POST /v1/events with 202 and a webhookd-sized JSON body; no database.
  --backlog 0 keeps cpp-httplib's listen backlog of 5, as webhookd has it.
  Prints "listening on 127.0.0.1:PORT" once bound (--port 0, the default, picks one).
)";

constexpr const char* kReply =
    R"({"id":"evt_1","type":"order.created","created_at":"2025-01-01T00:00:00.000000Z",)"
    R"("deliveries":[{"id":"dlv_1","destination_id":"dst_1","status":"pending"}]})";

}  // namespace

int main(int argc, char** argv) {
  const webhookd::bench::Flags flags(argc, argv, kUsage);
  httplib::Server http;
  webhookd::bench::ConfigureLikeWebhookd(http, static_cast<int>(flags.Num("threads", 128)), 262144);
  http.Post("/v1/events", [](const httplib::Request&, httplib::Response& res) {
    res.status = 202;
    res.set_content(kReply, "application/json");
  });
  return webhookd::bench::ListenAndServe(http, static_cast<int>(flags.Num("port", 0)),
                                         static_cast<int>(flags.Num("backlog", 0)));
}
