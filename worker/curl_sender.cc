#include "worker/curl_sender.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <future>

#include "base/log.h"
#include "base/strings.h"
#include "net/resolver.h"
#include "net/url.h"

namespace webhookd {
namespace {

constexpr size_t kKeptBody = 4096;

CURLM* Multi(void* m) { return static_cast<CURLM*>(m); }

long Millis(Duration d) {
  return static_cast<long>(std::max<int64_t>(1, (d.count() + 999) / 1000));
}

std::optional<IpAddress> FromSockaddr(const sockaddr* sa) {
  if (sa->sa_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(sa);
    return IpAddress::V4(ntohl(in->sin_addr.s_addr));
  }
  if (sa->sa_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(sa);
    std::array<uint8_t, 16> bytes;
    std::memcpy(bytes.data(), in6->sin6_addr.s6_addr, 16);
    return IpAddress::V6(bytes);
  }
  return std::nullopt;
}

std::once_flag curl_initialized;

}  // namespace

struct CurlSender::Transfer {
  Outgoing out;
  Done done;
  Url url;
  SendResult result;
  // Set while it runs on the transfer thread.
  CURL* easy = nullptr;
  curl_slist* headers = nullptr;
  size_t read = 0;
  bool over_limit = false;
  std::optional<IpAddress> refused_address;  // a connection the socket callback refused
  char error[CURL_ERROR_SIZE] = {};
  bool allow_private = false;
  size_t max_read = 0;
  // Through a proxy: the lookup first, then the request to `connect_to`.
  enum class Phase { kDirect, kLookup, kProxied } phase = Phase::kDirect;
  std::optional<IpAddress> connect_to;
  std::chrono::steady_clock::time_point deadline;
  curl_slist* connect_to_list = nullptr;

  ~Transfer() {
    curl_slist_free_all(headers);
    curl_slist_free_all(connect_to_list);
  }
};

namespace {

size_t OnHeader(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<CurlSender::Transfer*>(user);
  const std::string_view line(data, size * count);
  // A new status line (after an interim 1xx answer) starts the headers afresh.
  if (StartsWithIgnoreCase(line, "http/")) t->result.retry_after.reset();
  if (StartsWithIgnoreCase(line, "retry-after:")) {
    t->result.retry_after = std::string(Trim(line.substr(12), " \t\r\n"));
  }
  return size * count;
}

size_t OnBody(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<CurlSender::Transfer*>(user);
  const size_t len = size * count;
  if (t->result.body.size() < kKeptBody) {
    t->result.body.append(data, std::min(len, kKeptBody - t->result.body.size()));
  }
  t->read += len;
  if (t->read > t->max_read) {
    t->over_limit = true;
    return 0;  // curl ends the transfer (CURLE_WRITE_ERROR) and drops the connection
  }
  return len;
}

// An attempt's error when its host does not resolve. Unless private destinations are
// allowed, the words of a refused address: tenants read attempt errors, and "no address"
// beside "not allowed" would tell them which internal names exist. The name stays in the
// operator's log.
std::string NoAddress(const CurlSender::Transfer& t) {
  if (t.allow_private) return "DNS: no address for " + t.url.host;
  Log(LogLevel::kWarn, "delivery host does not resolve", {{"host", t.url.host}});
  return std::string(kAddressNotAllowed);
}

// The last word on where a connection goes: every address curl is about to connect to,
// whether the URL held it or DNS answered it, must be public unless private destinations
// are allowed. curl then tries the host's next address, if it has one.
curl_socket_t OnOpenSocket(void* user, curlsocktype, curl_sockaddr* address) {
  auto* t = static_cast<CurlSender::Transfer*>(user);
  // Tunnelled, the one connection is to the proxy: the destination's address was vetted
  // in the lookup and is what the CONNECT asks for.
  if (t->phase == CurlSender::Transfer::Phase::kProxied) {
    return ::socket(address->family, address->socktype, address->protocol);
  }
  const auto ip = FromSockaddr(&address->addr);
  if (!ip) return CURL_SOCKET_BAD;  // neither IPv4 nor IPv6: curl is asked for neither
  if (!t->allow_private && !IsPublicAddress(*ip)) {
    t->refused_address = *ip;
    return CURL_SOCKET_BAD;
  }
  return ::socket(address->family, address->socktype, address->protocol);
}

// The lookup before a tunnelled request: the same vetting, but the first allowed address
// is kept and no connection is made (curl goes on to the next address, then gives up).
curl_socket_t OnLookupSocket(void* user, curlsocktype, curl_sockaddr* address) {
  auto* t = static_cast<CurlSender::Transfer*>(user);
  const auto ip = FromSockaddr(&address->addr);
  if (!ip || t->connect_to) return CURL_SOCKET_BAD;
  if (!t->allow_private && !IsPublicAddress(*ip)) {
    t->refused_address = *ip;
  } else {
    t->connect_to = *ip;
  }
  return CURL_SOCKET_BAD;
}

}  // namespace

CurlSender::CurlSender(Options options) : options_(std::move(options)), resolve_list_(nullptr) {
  std::call_once(curl_initialized, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  for (const auto& entry : options_.resolve) {
    resolve_list_ = curl_slist_append(static_cast<curl_slist*>(resolve_list_), entry.c_str());
  }
  multi_ = curl_multi_init();
  curl_multi_setopt(Multi(multi_), CURLMOPT_MAXCONNECTS,
                    static_cast<long>(options_.max_connections));
  curl_multi_setopt(Multi(multi_), CURLMOPT_SOCKETFUNCTION, OnSocket);
  curl_multi_setopt(Multi(multi_), CURLMOPT_SOCKETDATA, this);
  curl_multi_setopt(Multi(multi_), CURLMOPT_TIMERFUNCTION, OnTimer);
  curl_multi_setopt(Multi(multi_), CURLMOPT_TIMERDATA, this);
  transfer_thread_ = std::thread([this] { TransferLoop(); });
}

CurlSender::~CurlSender() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  epoll_.Wake();
  transfer_thread_.join();
  for (void* easy : idle_handles_) curl_easy_cleanup(static_cast<CURL*>(easy));
  // Closing the kept-alive connections may still call OnSocket and OnTimer: epoll_ and
  // timer_ outlive this.
  curl_multi_cleanup(Multi(multi_));
  curl_slist_free_all(static_cast<curl_slist*>(resolve_list_));
}

void CurlSender::Start(Outgoing request, Done done) {
  auto t = std::make_unique<Transfer>();
  t->out = std::move(request);
  t->done = std::move(done);
  t->allow_private = options_.allow_private;
  t->max_read = options_.max_response_read;
  t->deadline = std::chrono::steady_clock::now() + options_.attempt_timeout;
  auto url = ParseUrl(t->out.url);
  if (!url) {
    t->result.refused = true;
    t->result.error = "invalid destination URL: " + url.error().message;
    Submit(std::move(t));
    return;
  }
  t->url = std::move(*url);
  // What is refused without DNS (localhost names, malformed hosts) is refused here; the
  // addresses themselves are checked as curl connects to them.
  if (auto refused = RefuseBeforeDns(t->url.host, t->allow_private)) {
    if (refused->kind == ErrorKind::kForbidden) {
      Log(LogLevel::kWarn, "delivery refused by the private-address rule",
          {{"reason", refused->message}});
      t->result.refused = true;
      t->result.error = std::string(kAddressNotAllowed);
    } else {
      t->result.refused = true;
      t->result.error = "invalid destination URL: " + refused->message;
    }
  }
  if (!options_.proxy.empty()) {
    // A literal address was vetted just now; a name is looked up first.
    t->connect_to = ParseIpLiteral(t->url.host);
    t->phase = t->connect_to ? Transfer::Phase::kProxied : Transfer::Phase::kLookup;
  }
  Submit(std::move(t));
}

void CurlSender::Submit(std::unique_ptr<Transfer> t) {
  {
    std::lock_guard lock(mu_);
    submitted_.push_back(std::move(t));
  }
  epoll_.Wake();
}

void CurlSender::CancelUnstarted() {
  // `done` never runs inside Start, and callers may hold their own locks here: the
  // transfer thread answers the cancelled ones, which Begin ends without the network.
  {
    std::lock_guard lock(mu_);
    if (submitted_.empty()) return;
    for (auto& t : submitted_) {
      t->result = SendResult{};
      t->result.not_started = true;
      t->result.error = "not started";
    }
  }
  epoll_.Wake();
}

SendResult CurlSender::Send(const Outgoing& request) {
  std::promise<SendResult> promise;
  auto result = promise.get_future();
  Start(request, [&promise](SendResult r) { promise.set_value(std::move(r)); });
  return result.get();
}

void CurlSender::Begin(std::unique_ptr<Transfer> t) {
  // Refused or cancelled: answered without touching the network.
  if (t->result.refused || t->result.error || t->result.not_started) {
    auto done = std::move(t->done);
    done(std::move(t->result));
    return;
  }
  CURL* easy;
  if (idle_handles_.empty()) {
    easy = curl_easy_init();
  } else {
    easy = static_cast<CURL*>(idle_handles_.back());
    idle_handles_.pop_back();
    curl_easy_reset(easy);
  }
  t->easy = easy;
  if (t->phase == Transfer::Phase::kLookup) {
    BeginLookup(std::move(t), easy);
    return;
  }
  if (!Configure(*t, easy)) {
    idle_handles_.push_back(easy);
    t->result.timed_out = true;
    t->result.error = "timed out after " + std::to_string(Millis(options_.attempt_timeout)) + " ms";
    auto done = std::move(t->done);
    done(std::move(t->result));
    return;
  }
  curl_multi_add_handle(Multi(multi_), easy);
  running_.insert(t.release());  // owned through running_ until Finish
}

void CurlSender::BeginLookup(std::unique_ptr<Transfer> t, void* handle) {
  CURL* easy = static_cast<CURL*>(handle);
  const Url& u = t->url;
  const bool v6_host = u.host.find(':') != std::string::npos;
  // http:// whatever the scheme: no connection is made, so no TLS either.
  const std::string url =
      "http://" + (v6_host ? "[" + u.host + "]" : u.host) + ":" + std::to_string(u.port) + "/";
  curl_easy_setopt(easy, CURLOPT_URL, url.c_str());
  curl_easy_setopt(easy, CURLOPT_PROTOCOLS_STR, "http");
  curl_easy_setopt(easy, CURLOPT_RESOLVE, resolve_list_);
  curl_easy_setopt(easy, CURLOPT_QUICK_EXIT, 1L);
  curl_easy_setopt(easy, CURLOPT_PROXY, "");
  curl_easy_setopt(easy, CURLOPT_CONNECT_ONLY, 1L);
  curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, Millis(options_.attempt_timeout));
  curl_easy_setopt(easy, CURLOPT_OPENSOCKETFUNCTION, OnLookupSocket);
  curl_easy_setopt(easy, CURLOPT_OPENSOCKETDATA, t.get());
  curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, t->error);
  curl_easy_setopt(easy, CURLOPT_PRIVATE, t.get());
  curl_multi_add_handle(Multi(multi_), easy);
  running_.insert(t.release());
}

bool CurlSender::Configure(Transfer& tr, void* handle) {
  CURL* easy = static_cast<CURL*>(handle);
  Transfer* t = &tr;
  const auto left =
      std::chrono::duration_cast<Duration>(t->deadline - std::chrono::steady_clock::now());
  if (left <= Duration::zero()) return false;
  const Url& u = t->url;
  const bool v6_host = u.host.find(':') != std::string::npos;
  // The URL from its parsed parts, so curl reads the same host and port that were checked.
  const std::string url = u.scheme + "://" + (v6_host ? "[" + u.host + "]" : u.host) + ":" +
                          std::to_string(u.port) + u.target;
  for (const auto& [name, value] : t->out.headers) {
    // curl sends "Name:" with nothing after it as "remove this header": "Name;" is empty.
    std::string line = name;
    line += value.empty() ? ";" : ": ";
    line += value;
    t->headers = curl_slist_append(t->headers, line.c_str());
  }
  // Neither curl's default Accept nor "Expect: 100-continue" (a round trip for bodies
  // over 1 KiB): the request is the headers given and the body.
  t->headers = curl_slist_append(t->headers, "Expect:");
  t->headers = curl_slist_append(t->headers, "Accept:");

  curl_easy_setopt(easy, CURLOPT_URL, url.c_str());
  curl_easy_setopt(easy, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(easy, CURLOPT_RESOLVE, resolve_list_);
  // A lookup still running when the attempt ends is abandoned, not waited for: without
  // this, curl joins the resolver thread on the transfer thread, and one name server that
  // never answers would stall every attempt of the process until getaddrinfo gives up.
  // The price is the abandoned thread's few bytes, freed by nobody.
  curl_easy_setopt(easy, CURLOPT_QUICK_EXIT, 1L);
  if (t->phase == Transfer::Phase::kProxied) {
    curl_easy_setopt(easy, CURLOPT_PROXY, options_.proxy.c_str());
    curl_easy_setopt(easy, CURLOPT_HTTPPROXYTUNNEL, 1L);  // http destinations too
    // The CONNECT asks for the vetted address, never for a name the proxy would resolve.
    // "::ADDRESS:PORT": whatever the host and port of the URL (the handle has one URL).
    const std::string address = t->connect_to->ToString();
    const std::string to =
        "::" + (address.find(':') != std::string::npos ? "[" + address + "]" : address) + ":" +
        std::to_string(u.port);
    curl_slist_free_all(t->connect_to_list);
    t->connect_to_list = curl_slist_append(nullptr, to.c_str());
    curl_easy_setopt(easy, CURLOPT_CONNECT_TO, t->connect_to_list);
  } else {
    curl_easy_setopt(easy, CURLOPT_PROXY, "");  // never a proxy from the environment
  }
  curl_easy_setopt(easy, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(easy, CURLOPT_HTTP_VERSION, static_cast<long>(CURL_HTTP_VERSION_1_1));
  curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(easy, CURLOPT_TCP_NODELAY, 1L);
  curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS, Millis(options_.connect_timeout));
  curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, Millis(left));
  curl_easy_setopt(easy, CURLOPT_SSL_VERIFYPEER, 1L);
  curl_easy_setopt(easy, CURLOPT_SSL_VERIFYHOST, 2L);
  if (const auto& tls = t->out.tls) {
    // Blobs are copied by curl; connections are reused only with the same settings.
    const auto blob = [](const std::string& pem) {
      return curl_blob{const_cast<char*>(pem.data()), pem.size(), CURL_BLOB_COPY};
    };
    if (tls->client_certificate && tls->client_key) {
      curl_blob cert = blob(*tls->client_certificate);
      curl_blob key = blob(*tls->client_key);
      curl_easy_setopt(easy, CURLOPT_SSLCERT_BLOB, &cert);
      curl_easy_setopt(easy, CURLOPT_SSLCERTTYPE, "PEM");
      curl_easy_setopt(easy, CURLOPT_SSLKEY_BLOB, &key);
      curl_easy_setopt(easy, CURLOPT_SSLKEYTYPE, "PEM");
    }
    if (tls->ca_certificate) {
      // That CA alone: neither the system's bundle nor its directory.
      curl_blob ca = blob(*tls->ca_certificate);
      curl_easy_setopt(easy, CURLOPT_CAINFO_BLOB, &ca);
      curl_easy_setopt(easy, CURLOPT_CAINFO, nullptr);
      curl_easy_setopt(easy, CURLOPT_CAPATH, nullptr);
    }
  }
  curl_easy_setopt(easy, CURLOPT_HTTPHEADER, t->headers);
  curl_easy_setopt(easy, CURLOPT_POSTFIELDS, t->out.body.data());
  curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(t->out.body.size()));
  curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, OnHeader);
  curl_easy_setopt(easy, CURLOPT_HEADERDATA, t);
  curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, OnBody);
  curl_easy_setopt(easy, CURLOPT_WRITEDATA, t);
  curl_easy_setopt(easy, CURLOPT_OPENSOCKETFUNCTION, OnOpenSocket);
  curl_easy_setopt(easy, CURLOPT_OPENSOCKETDATA, t);
  curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, t->error);
  curl_easy_setopt(easy, CURLOPT_PRIVATE, t);
  return true;
}

void CurlSender::FinishLookup(Transfer* raw, int code) {
  running_.erase(raw);
  std::unique_ptr<Transfer> t(raw);
  CURL* easy = t->easy;
  curl_multi_remove_handle(Multi(multi_), easy);
  SendResult& r = t->result;
  if (code == CURLE_ABORTED_BY_CALLBACK) {  // shutting down
    r.error = std::string("HTTP ") + curl_easy_strerror(CURLE_ABORTED_BY_CALLBACK);
  } else if (t->connect_to) {
    t->phase = Transfer::Phase::kProxied;
    t->error[0] = '\0';
    curl_easy_reset(easy);
    if (Configure(*t, easy)) {
      curl_multi_add_handle(Multi(multi_), easy);
      running_.insert(t.release());
      return;
    }
    r.timed_out = true;
    r.error = "timed out after " + std::to_string(Millis(options_.attempt_timeout)) + " ms";
  } else if (t->refused_address) {
    r.refused = true;
    Log(LogLevel::kWarn, "delivery refused by the private-address rule",
        {{"host", t->url.host}, {"address", t->refused_address->ToString()}});
    r.error = std::string(kAddressNotAllowed);
  } else if (code == CURLE_OPERATION_TIMEDOUT) {
    r.timed_out = true;
    r.error = "timed out after " + std::to_string(Millis(options_.attempt_timeout)) + " ms";
  } else {
    r.error = NoAddress(*t);
  }
  idle_handles_.push_back(easy);
  auto done = std::move(t->done);
  done(std::move(r));
}

void CurlSender::Finish(Transfer* raw, int code) {
  if (raw->phase == Transfer::Phase::kLookup) {
    FinishLookup(raw, code);
    return;
  }
  running_.erase(raw);
  std::unique_ptr<Transfer> t(raw);
  CURL* easy = t->easy;
  const auto rc = static_cast<CURLcode>(code);
  long status = 0;
  curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
  long connect_code = 0;  // the proxy's answer to CONNECT
  curl_easy_getinfo(easy, CURLINFO_HTTP_CONNECTCODE, &connect_code);
  curl_off_t connected_us = 0;
  curl_easy_getinfo(easy, CURLINFO_CONNECT_TIME_T, &connected_us);
  const bool proxied = t->phase == Transfer::Phase::kProxied;
  SendResult& r = t->result;
  if (rc == CURLE_OK || (rc == CURLE_WRITE_ERROR && t->over_limit && status > 0)) {
    r.status_code = static_cast<int>(status);
  } else if (proxied && connect_code == 0 &&
             (rc == CURLE_COULDNT_CONNECT || rc == CURLE_COULDNT_RESOLVE_PROXY ||
              (rc == CURLE_OPERATION_TIMEDOUT && connected_us == 0))) {
    r.proxy_unreachable = true;
    r.error = std::string("egress proxy unreachable: ") + curl_easy_strerror(rc);
    r.retry_after.reset();
  } else if (proxied && connect_code >= 300) {
    r.error = "egress proxy answered " + std::to_string(connect_code) + " to CONNECT";
    r.retry_after.reset();
  } else if (t->refused_address) {
    // Tenant keys read attempt errors: the address stays in the operator's log.
    r.refused = true;
    Log(LogLevel::kWarn, "delivery refused by the private-address rule",
        {{"host", t->url.host}, {"address", t->refused_address->ToString()}});
    r.error = std::string(kAddressNotAllowed);
  } else if (rc == CURLE_OPERATION_TIMEDOUT) {
    r.timed_out = true;
    r.error = "timed out after " + std::to_string(Millis(options_.attempt_timeout)) + " ms";
    r.retry_after.reset();
  } else if (rc == CURLE_COULDNT_RESOLVE_HOST) {
    r.error = NoAddress(*t);
    r.retry_after.reset();
  } else {
    r.error = std::string("HTTP ") + curl_easy_strerror(rc);
    if (t->error[0] != '\0') *r.error += std::string(": ") + t->error;
    r.retry_after.reset();
  }
  curl_multi_remove_handle(Multi(multi_), easy);
  // The headers and body it pointed at go with the transfer.
  curl_easy_setopt(easy, CURLOPT_HTTPHEADER, nullptr);
  idle_handles_.push_back(easy);
  auto done = std::move(t->done);
  done(std::move(r));
}

int CurlSender::OnSocket(void*, int socket, int what, void* self, void* socketp) {
  auto* sender = static_cast<CurlSender*>(self);
  if (what == CURL_POLL_REMOVE) {
    sender->epoll_.Forget(socket);
    return 0;
  }
  const uint32_t events =
      ((what & CURL_POLL_IN) ? EPOLLIN : 0u) | ((what & CURL_POLL_OUT) ? EPOLLOUT : 0u);
  // curl keeps `socketp` for the socket until it is removed: non-null, it is in the set.
  if (!sender->epoll_.Watch(socket, events, socketp != nullptr)) {
    // The transfer then waits for nothing and ends at its timeout, as curl's timer stands.
    Log(LogLevel::kError, "cannot watch a connection's socket", {{"error", std::strerror(errno)}});
    return 0;
  }
  if (socketp == nullptr) curl_multi_assign(Multi(sender->multi_), socket, sender);
  return 0;
}

int CurlSender::OnTimer(void*, long timeout_ms, void* self) {
  auto* sender = static_cast<CurlSender*>(self);
  // Never socket_action from here (curl forbids the recursion): the loop runs it, at once
  // for 0.
  if (timeout_ms < 0) {
    sender->timer_.reset();
  } else {
    sender->timer_ = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  }
  return 0;
}

void CurlSender::Act(int socket, uint32_t events) {
  // With neither bit (an error or hang-up alone) curl checks the socket itself, so the
  // attempt's error is the socket's own rather than curl's generic "select/poll returned
  // error".
  const int action =
      ((events & EPOLLIN) ? CURL_CSELECT_IN : 0) | ((events & EPOLLOUT) ? CURL_CSELECT_OUT : 0);
  int running = 0;
  curl_multi_socket_action(Multi(multi_), socket, action, &running);
}

void CurlSender::RunTimerIfDue() {
  if (!timer_ || *timer_ > std::chrono::steady_clock::now()) return;
  // Cleared first: curl sets it again, from inside the call, when it still wants one. A
  // timer run a little early (the callback's milliseconds are rounded down) is set again
  // too, since a timeout run makes curl report its next one even when unchanged.
  timer_.reset();
  int running = 0;
  curl_multi_socket_action(Multi(multi_), CURL_SOCKET_TIMEOUT, 0, &running);
}

void CurlSender::FinishDone() {
  int left = 0;
  while (CURLMsg* msg = curl_multi_info_read(Multi(multi_), &left)) {
    if (msg->msg != CURLMSG_DONE) continue;
    Transfer* t = nullptr;
    curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, &t);
    Finish(t, msg->data.result);
  }
}

void CurlSender::TransferLoop() {
  for (;;) {
    std::vector<std::unique_ptr<Transfer>> batch;
    bool stop;
    {
      std::lock_guard lock(mu_);
      batch.swap(submitted_);
      stop = stop_;
    }
    for (auto& t : batch) {
      if (stop && !t->result.not_started) {
        t->result = SendResult{};
        t->result.error = "shutting down";
      }
      Begin(std::move(t));
    }
    if (stop) break;
    // Transfers just added are started by the timer too (curl sets it to 0 for them).
    RunTimerIfDue();
    FinishDone();
    int timeout_ms = -1;  // with no timer, only a socket or Wake has work for this thread
    if (timer_) {
      const auto left = *timer_ - std::chrono::steady_clock::now();
      // Rounded up: waking before the timer is due would spin until it is.
      const auto ms = std::chrono::ceil<std::chrono::milliseconds>(left).count();
      timeout_ms = static_cast<int>(std::clamp<int64_t>(ms, 0, INT_MAX));
    }
    epoll_.Wait(timeout_ms, [this](int socket, uint32_t events) { Act(socket, events); });
    FinishDone();
  }
  // Whatever still runs is ended: the owner has stopped waiting for it.
  while (!running_.empty()) {
    Transfer* t = *running_.begin();
    t->result = SendResult{};
    Finish(t, CURLE_ABORTED_BY_CALLBACK);
  }
}

}  // namespace webhookd
