#include "worker/token_source.h"

#include <cctype>
#include <nlohmann/json.hpp>

#include "base/encoding.h"

namespace webhookd {
namespace {

// application/x-www-form-urlencoded (RFC 6749 appendix B).
std::string FormEncode(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '*') {
      out += static_cast<char>(c);
    } else if (c == ' ') {
      out += '+';
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

// The credentials a token is for: a change of any of them asks for a new one.
std::string Fingerprint(const DestinationAuth& auth) {
  return HexEncode(Sha256(auth.token_url + '\n' + auth.client_id + '\n' + auth.client_secret +
                          '\n' + auth.scope.value_or("")));
}

}  // namespace

TokenSource::TokenSource(AsyncSender& sender, Clock& clock) : sender_(sender), clock_(clock) {}

Outgoing TokenSource::Request(const DestinationAuth& auth) {
  Outgoing out;
  out.url = auth.token_url;
  out.headers = {{"Content-Type", "application/x-www-form-urlencoded"},
                 {"Accept", "application/json"},
                 {"Authorization", "Basic " + Base64Encode(FormEncode(auth.client_id) + ":" +
                                                           FormEncode(auth.client_secret))}};
  out.body = "grant_type=client_credentials";
  if (auth.scope) out.body += "&scope=" + FormEncode(*auth.scope);
  return out;
}

void TokenSource::Get(int64_t destination_id, const DestinationAuth& auth, Done done) {
  const auto key = std::make_pair(destination_id, Fingerprint(auth));
  const Timestamp now = clock_.Now();
  std::unique_lock lock(mu_);
  Entry& e = entries_[key];
  if (!e.token.empty() && now < e.usable_until) {
    Token t{e.token, "", false};
    lock.unlock();  // `done` may ask again (after a 401)
    done(std::move(t));
    return;
  }
  e.waiting.push_back(std::move(done));
  if (e.fetching) return;  // one request in flight per destination and credentials
  e.fetching = true;
  lock.unlock();
  sender_.Start(Request(auth), [this, key, now](SendResult r) { Fetched(key, std::move(r), now); });
}

void TokenSource::Drop(int64_t destination_id, const std::string& token) {
  std::lock_guard lock(mu_);
  for (auto& [key, e] : entries_) {
    if (key.first == destination_id && e.token == token) e.token.clear();
  }
}

void TokenSource::Fetched(const std::pair<int64_t, std::string>& key, SendResult r,
                          Timestamp asked) {
  Token t;
  std::chrono::seconds lifetime{0};
  if (r.not_started) {
    t.not_started = true;
    t.error = "not started";
  } else if (!r.status_code) {
    t.error = "token request failed: " + r.error.value_or("no answer");
  } else if (*r.status_code < 200 || *r.status_code > 299) {
    t.error = "token request failed: " + std::to_string(*r.status_code);
  } else {
    const auto json = nlohmann::json::parse(r.body, nullptr, /*allow_exceptions=*/false);
    const auto token = json.is_object() ? json.find("access_token") : json.end();
    if (!json.is_object() || token == json.end() || !token->is_string() ||
        token->get_ref<const std::string&>().empty()) {
      t.error = "token request failed: the answer holds no access_token";
    } else {
      t.value = token->get<std::string>();
      // expires_in is RECOMMENDED, not required: without it a token is taken to last
      // kDefaultLifetime (and a 401 still replaces it at once).
      const auto expires_in = json.find("expires_in");
      lifetime = expires_in != json.end() && expires_in->is_number()
                     ? std::chrono::seconds(expires_in->get<int64_t>())
                     : kDefaultLifetime;
    }
  }
  std::vector<Done> waiting;
  {
    std::lock_guard lock(mu_);
    Entry& e = entries_[key];
    e.fetching = false;
    waiting.swap(e.waiting);
    if (t.value) {
      e.token = *t.value;
      e.usable_until = asked + lifetime - kMargin;
    }
  }
  for (Done& done : waiting) done(t);
}

}  // namespace webhookd
