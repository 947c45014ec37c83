#include "trace/curl_transport.h"

#include <curl/curl.h>

#include <algorithm>
#include <memory>

#include "base/strings.h"
#include "core/retry_after.h"

namespace webhookd::trace {
namespace {

// What the header callback collects of one answer.
struct Reply {
  std::optional<std::string> retry_after;
};

size_t OnHeader(char* data, size_t size, size_t count, void* user) {
  auto* reply = static_cast<Reply*>(user);
  const std::string_view line(data, size * count);
  // An interim 1xx answer's headers are not the final answer's.
  if (StartsWithIgnoreCase(line, "http/")) reply->retry_after.reset();
  if (StartsWithIgnoreCase(line, "retry-after:")) {
    reply->retry_after = std::string(Trim(line.substr(12), " \t\r\n"));
  }
  return size * count;
}

// The collector's body (an ExportTraceServiceResponse or a Status) is not read.
size_t OnBody(char*, size_t size, size_t count, void*) { return size * count; }

struct SlistDeleter {
  void operator()(curl_slist* list) const { curl_slist_free_all(list); }
};

std::once_flag curl_initialized;

}  // namespace

CurlTransport::CurlTransport(Clock& clock) : clock_(clock) {
  std::call_once(curl_initialized, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  multi_ = curl_multi_init();
  easy_ = curl_easy_init();
}

CurlTransport::~CurlTransport() {
  curl_easy_cleanup(static_cast<CURL*>(easy_));
  curl_multi_cleanup(static_cast<CURLM*>(multi_));
}

void CurlTransport::Cancel() {
  cancelled_ = true;
  if (multi_ != nullptr) curl_multi_wakeup(static_cast<CURLM*>(multi_));
}

Result<TransportAnswer> CurlTransport::Post(
    const std::string& url, const std::vector<std::pair<std::string, std::string>>& headers,
    std::string_view content_type, const std::string& body, std::chrono::milliseconds timeout) {
  std::lock_guard lock(mu_);
  CURLM* multi = static_cast<CURLM*>(multi_);
  CURL* easy = static_cast<CURL*>(easy_);
  if (multi == nullptr || easy == nullptr) {
    return Fail(ErrorKind::kUnavailable, "libcurl could not be initialized");
  }
  if (cancelled_) return Fail(ErrorKind::kUnavailable, "export cancelled");
  // A reset keeps the open connections and caches; only the options go.
  curl_easy_reset(easy);

  curl_slist* list = nullptr;
  const auto add = [&list](const std::string& line) {
    list = curl_slist_append(list, line.c_str());
  };
  add("Content-Type: " + std::string(content_type));
  // Without it, curl waits up to a second for a "100 Continue" before a large body.
  add("Expect:");
  for (const auto& [name, value] : headers) {
    std::string line = name;
    line += ": ";
    line += value;
    add(line);
  }
  const std::unique_ptr<curl_slist, SlistDeleter> owned(list);

  Reply reply;
  char error[CURL_ERROR_SIZE] = {};
  curl_easy_setopt(easy, CURLOPT_URL, url.c_str());
  curl_easy_setopt(easy, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(easy, CURLOPT_POST, 1L);
  curl_easy_setopt(easy, CURLOPT_POSTFIELDS, body.data());
  curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  curl_easy_setopt(easy, CURLOPT_HTTPHEADER, list);
  curl_easy_setopt(easy, CURLOPT_USERAGENT, "webhookd/" WEBHOOKD_VERSION " otlp-exporter");
  curl_easy_setopt(easy, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS,
                   static_cast<long>(std::max<int64_t>(1, timeout.count())));
  curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, OnHeader);
  curl_easy_setopt(easy, CURLOPT_HEADERDATA, &reply);
  curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, OnBody);
  curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, error);

  std::optional<CURLcode> code;
  if (curl_multi_add_handle(multi, easy) == CURLM_OK) {
    while (!cancelled_) {
      int running = 0;
      if (curl_multi_perform(multi, &running) != CURLM_OK) break;
      int left = 0;
      while (CURLMsg* message = curl_multi_info_read(multi, &left)) {
        if (message->msg == CURLMSG_DONE) code = message->data.result;
      }
      if (code || running == 0) break;
      // Woken early by progress on the socket or by Cancel.
      curl_multi_poll(multi, nullptr, 0, 1000, nullptr);
    }
    curl_multi_remove_handle(multi, easy);
  }
  curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, nullptr);  // `error` goes out of scope
  if (cancelled_ && !code) return Fail(ErrorKind::kUnavailable, "export cancelled");
  if (!code) {
    return Fail(ErrorKind::kUnavailable, "export failed: libcurl's multi interface failed");
  }
  if (*code != CURLE_OK) {
    return Fail(
        ErrorKind::kUnavailable,
        std::string("export failed: ") + (error[0] != '\0' ? error : curl_easy_strerror(*code)));
  }
  long status = 0;
  curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
  TransportAnswer answer;
  answer.status = static_cast<int>(status);
  if (reply.retry_after) {
    if (const auto wait = ParseRetryAfter(*reply.retry_after, clock_.Now())) {
      answer.retry_after = std::chrono::ceil<std::chrono::milliseconds>(*wait);
    }
  }
  return answer;
}

}  // namespace webhookd::trace
