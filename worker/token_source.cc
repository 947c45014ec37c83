#include "worker/token_source.h"

#include <algorithm>
#include <cctype>
#include <cmath>
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

TokenSource::TokenSource(AsyncSender& sender, Clock& clock, size_t max_entries)
    : sender_(sender), clock_(clock), max_entries_(std::max<size_t>(max_entries, 1)) {}

std::chrono::seconds TokenSource::LifetimeOf(const nlohmann::json& expires_in) {
  if (expires_in.is_number_unsigned()) {
    // Compared as an integer: a value past 2^53 as a double rounds, past 2^63 overflows.
    const auto n = expires_in.get<uint64_t>();
    return n >= static_cast<uint64_t>(kMaxLifetime.count()) ? kMaxLifetime
                                                            : std::chrono::seconds(n);
  }
  if (expires_in.is_number_integer()) {
    const auto n = expires_in.get<int64_t>();
    return std::chrono::seconds(std::clamp<int64_t>(n, 0, kMaxLifetime.count()));
  }
  if (!expires_in.is_number_float()) return kDefaultLifetime;
  const double seconds = expires_in.get<double>();
  if (!std::isfinite(seconds)) return kDefaultLifetime;
  return std::chrono::seconds(
      static_cast<int64_t>(std::clamp(seconds, 0.0, static_cast<double>(kMaxLifetime.count()))));
}

size_t TokenSource::cached() const {
  std::lock_guard lock(mu_);
  return entries_.size();
}

void TokenSource::Trim(Timestamp now) {
  if (entries_.size() < max_entries_) return;  // room for one more
  const auto idle = [](const Entry& e) { return !e.fetching && e.waiting.empty(); };
  std::erase_if(entries_, [&](const auto& kv) {
    const Entry& e = kv.second;
    return idle(e) && (e.token.empty() || now >= e.usable_until);
  });
  const size_t target = max_entries_ - max_entries_ / 4;
  if (entries_.size() <= target) return;
  // Still too many live tokens: those that run out soonest go first.
  std::vector<std::pair<Timestamp, decltype(entries_)::iterator>> live;
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    if (idle(it->second)) live.emplace_back(it->second.usable_until, it);
  }
  const size_t excess = std::min(entries_.size() - target, live.size());
  std::ranges::nth_element(live, live.begin() + static_cast<std::ptrdiff_t>(excess),
                           [](const auto& a, const auto& b) { return a.first < b.first; });
  for (size_t i = 0; i < excess; ++i) entries_.erase(live[i].second);
}

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
  if (!entries_.contains(key)) Trim(now);
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
      lifetime = expires_in != json.end() ? LifetimeOf(*expires_in) : kDefaultLifetime;
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
