#include "worker/http_sender.h"

#include <httplib.h>

#include "net/url.h"

namespace webhookd {
namespace {

constexpr size_t kKeptBody = 4096;
constexpr Duration kSocketTimeoutMargin = std::chrono::seconds(1);

std::string Origin(const Url& url) {
  const bool v6 = url.host.find(':') != std::string::npos;
  return url.scheme + "://" + (v6 ? "[" + url.host + "]" : url.host) + ":" +
         std::to_string(url.port);
}

std::pair<time_t, time_t> SecUsec(Duration d) {
  const auto us = std::max<int64_t>(1, d.count());
  return {static_cast<time_t>(us / 1'000'000), static_cast<time_t>(us % 1'000'000)};
}

}  // namespace

HttpSender::HttpSender(Resolver& resolver, Options options)
    : resolver_(resolver), options_(options) {}

HttpSender::~HttpSender() = default;

std::unique_ptr<httplib::Client> HttpSender::Checkout(const std::string& key) {
  std::lock_guard lock(mu_);
  auto it = idle_.find(key);
  if (it == idle_.end() || it->second.empty()) return nullptr;
  auto client = std::move(it->second.back());
  it->second.pop_back();
  return client;
}

void HttpSender::Return(const std::string& key, std::unique_ptr<httplib::Client> client) {
  std::lock_guard lock(mu_);
  auto& idle = idle_[key];
  if (idle.size() < options_.max_idle_per_origin) idle.push_back(std::move(client));
}

SendResult HttpSender::Send(const Outgoing& out) {
  SendResult result;
  auto url = ParseUrl(out.url);
  if (!url) {
    result.refused = true;
    result.error = "invalid destination URL: " + url.error().message;
    return result;
  }
  auto addresses = VetHost(url->host, resolver_, options_.allow_private);
  if (!addresses) {
    if (addresses.error().kind == ErrorKind::kForbidden) {
      result.refused = true;
      result.error = "refused: " + addresses.error().message;
    } else {
      result.error = "DNS: " + addresses.error().message;
    }
    return result;
  }
  if (addresses->empty()) {
    result.error = "DNS: no address for " + url->host;
    return result;
  }
  // Connect to the address that was vetted, never to a fresh lookup of the name.
  const std::string ip = addresses->front().ToString();
  const std::string key = Origin(*url) + "|" + ip;

  auto client = Checkout(key);
  if (!client) {
    client = std::make_unique<httplib::Client>(Origin(*url));
    client->set_hostname_addr_map({{url->host, ip}});
    const auto [cs, cu] = SecUsec(options_.connect_timeout);
    client->set_connection_timeout(cs, cu);
    // The watchdog bounds the attempt; the socket timeouts are only a backstop, set later
    // so that they do not beat the watchdog to it and report a timeout as "HTTP Read".
    const auto [rs, ru] = SecUsec(options_.attempt_timeout + kSocketTimeoutMargin);
    client->set_read_timeout(rs, ru);
    client->set_write_timeout(rs, ru);
    client->set_keep_alive(true);
    client->set_follow_location(false);
    client->set_tcp_nodelay(true);
    client->enable_server_certificate_verification(true);
  }

  httplib::Request req;
  req.method = "POST";
  req.path = url->target;
  for (const auto& [name, value] : out.headers) req.headers.emplace(name, value);
  req.body = out.body;
  size_t read = 0;
  bool over_limit = false;
  req.response_handler = [&](const httplib::Response& r) {
    result.status_code = r.status;
    if (r.has_header("Retry-After")) result.retry_after = r.get_header_value("Retry-After");
    return true;
  };
  req.content_receiver = [&](const char* data, size_t len, uint64_t, uint64_t) {
    if (result.body.size() < kKeptBody) {
      result.body.append(data, std::min(len, kKeptBody - result.body.size()));
    }
    read += len;
    if (read > options_.max_response_read) {
      over_limit = true;
      return false;
    }
    return true;
  };

  httplib::Client* raw = client.get();
  const uint64_t guard = watchdog_.Arm(
      std::chrono::steady_clock::now() +
          std::chrono::duration_cast<std::chrono::steady_clock::duration>(options_.attempt_timeout),
      [raw] { raw->stop(); });
  httplib::Response res;
  httplib::Error error = httplib::Error::Success;
  const auto sent_at = std::chrono::steady_clock::now();
  const bool ok = client->send(req, res, error);
  result.timed_out = watchdog_.Disarm(guard);
  // A socket timeout that still came first is the attempt timing out all the same.
  if (!ok && std::chrono::steady_clock::now() - sent_at >= options_.attempt_timeout)
    result.timed_out = true;

  if (result.timed_out) {
    result.error =
        "timed out after " + std::to_string(options_.attempt_timeout.count() / 1000) + " ms";
    result.status_code.reset();
    return result;  // the connection is in an unknown state: drop it
  }
  if (!ok && !(over_limit && result.status_code)) {
    result.error = "HTTP " + httplib::to_string(error);
    if (error == httplib::Error::Read || error == httplib::Error::Write) result.status_code.reset();
    return result;
  }
  // cpp-httplib 0.11 calls the response handler only for a response that may have a body:
  // a 204 No Content reaches us in `res` alone, and without this would count as no answer.
  if (!result.status_code) {
    result.status_code = res.status;
    if (res.has_header("Retry-After")) result.retry_after = res.get_header_value("Retry-After");
  }
  if (!over_limit) Return(key, std::move(client));
  return result;
}

}  // namespace webhookd
