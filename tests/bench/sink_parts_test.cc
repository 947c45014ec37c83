// bench_sink's signature check and request parser (bench/webhook_signature.h,
// bench/http_request.h): the check accepts the Standard Webhooks example and webhookd's own
// signatures and refuses a changed byte anywhere; the parser gives the same request
// however the bytes are cut.
#include <gtest/gtest.h>

#include <string>

#include "bench/http_request.h"
#include "bench/webhook_signature.h"
#include "core/signing.h"

namespace webhookd::sink_parts_test {
namespace {

using bench::RequestParser;
using bench::SecretKey;
using bench::SignatureMatches;

TEST(SinkSignatureTest, TheSpecificationsExampleVerifies) {
  // The example of the Standard Webhooks specification.
  const auto key = SecretKey("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
  ASSERT_TRUE(key.has_value());
  const std::string id = "msg_p5jXN8AQM9LWM0D4loKWxJek";
  const std::string body = R"({"test": 2432232314})";
  EXPECT_TRUE(SignatureMatches(*key, id, "1614265330", body,
                               "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="));
  EXPECT_FALSE(SignatureMatches(*key, id, "1614265331", body,
                                "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="));
  EXPECT_FALSE(SignatureMatches(*key, id, "1614265330", body + " ",
                                "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="));
  EXPECT_FALSE(SignatureMatches(*key, id, "1614265330", body,
                                "v2,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="));
  // One character changed, at the end or in the middle; one missing.
  EXPECT_FALSE(SignatureMatches(*key, id, "1614265330", body,
                                "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OF="));
  EXPECT_FALSE(SignatureMatches(*key, id, "1614265330", body,
                                "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlF3uFJELVlNIOLJ1OE="));
  EXPECT_FALSE(SignatureMatches(*key, id, "1614265330", body,
                                "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1O="));
  // Among other entries, the right one is found.
  EXPECT_TRUE(
      SignatureMatches(*key, id, "1614265330", body,
                       "v1,bm90IGl0 v1a,x v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="));
}

TEST(SinkSignatureTest, WebhookdsSignaturesVerifyAndAnyOtherSecretsDoNot) {
  for (int i = 0; i < 20; ++i) {
    const std::string secret = GenerateSecret();
    const std::string other = GenerateSecret();
    const auto key = SecretKey(secret);
    ASSERT_TRUE(key.has_value());
    const std::string body = R"({"type":"order.created","n":)" + std::to_string(i) + "}";
    auto header = SignatureHeader({secret}, "evt_42", 1700000000 + i, body);
    ASSERT_TRUE(header.has_value());
    EXPECT_TRUE(SignatureMatches(*key, "evt_42", std::to_string(1700000000 + i), body, *header));
    EXPECT_FALSE(SignatureMatches(*key, "evt_43", std::to_string(1700000000 + i), body, *header));
    // During a rotation the header holds both secrets' signatures: either one verifies.
    auto both = SignatureHeader({other, secret}, "evt_42", 1700000000 + i, body);
    ASSERT_TRUE(both.has_value());
    EXPECT_TRUE(SignatureMatches(*key, "evt_42", std::to_string(1700000000 + i), body, *both));
    auto theirs = SignatureHeader({other}, "evt_42", 1700000000 + i, body);
    ASSERT_TRUE(theirs.has_value());
    EXPECT_FALSE(SignatureMatches(*key, "evt_42", std::to_string(1700000000 + i), body, *theirs));
  }
  EXPECT_FALSE(SecretKey("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").has_value());
}

// Feeds `wire` to a parser in pieces of `piece` bytes; the requests it completes.
std::vector<bench::Request> ParseInPieces(const std::string& wire, size_t piece, bool& bad) {
  RequestParser parser;
  std::vector<bench::Request> out;
  std::string buffer;
  bad = false;
  for (size_t at = 0; at < wire.size(); at += piece) {
    buffer += wire.substr(at, piece);
    for (;;) {
      size_t consumed = 0;
      const auto status = parser.Parse(buffer, consumed);
      buffer.erase(0, consumed);
      if (status == RequestParser::Status::kBad) {
        bad = true;
        return out;
      }
      if (status != RequestParser::Status::kComplete) break;
      out.push_back(parser.TakeRequest());
    }
  }
  return out;
}

TEST(SinkRequestParserTest, TheSameRequestsHoweverTheBytesAreCut) {
  const std::string wire =
      "POST /ok/1?x=1 HTTP/1.1\r\nHost: a\r\nWebhook-Id: evt_1\r\nContent-Length: 7\r\n\r\n"
      "{\"a\":1}"
      "POST /ok/2 HTTP/1.1\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
      "3;ext=1\r\n{\"b\r\n4\r\n\":2}\r\n0\r\nTrailer: t\r\n\r\n";
  for (size_t piece = 1; piece <= wire.size(); ++piece) {
    bool bad = false;
    const auto requests = ParseInPieces(wire, piece, bad);
    ASSERT_FALSE(bad) << "pieces of " << piece;
    ASSERT_EQ(requests.size(), 2u) << "pieces of " << piece;
    EXPECT_EQ(requests[0].method, "POST");
    EXPECT_EQ(requests[0].path, "/ok/1");
    ASSERT_NE(requests[0].Header("webhook-id"), nullptr);
    EXPECT_EQ(*requests[0].Header("webhook-id"), "evt_1");
    EXPECT_EQ(requests[0].body, "{\"a\":1}");
    EXPECT_TRUE(requests[0].keep_alive);
    EXPECT_EQ(requests[1].path, "/ok/2");
    EXPECT_EQ(requests[1].body, "{\"b\":2}");
    EXPECT_FALSE(requests[1].keep_alive);
  }
}

TEST(SinkRequestParserTest, AMalformedRequestIsRefused) {
  for (const std::string& wire : {
           std::string("POST /a HTTP/1.1\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nab"),
           std::string("POST /a HTTP/1.1\r\nContent-Length: x\r\n\r\n"),
           std::string("POST /a HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"),
           std::string("POST /a HTTP/1.1\r\nBad Header: 1\r\n\r\n"),
           std::string("GARBAGE\r\n\r\n"),
       }) {
    bool bad = false;
    ParseInPieces(wire, wire.size(), bad);
    EXPECT_TRUE(bad) << wire;
  }
}

}  // namespace
}  // namespace webhookd::sink_parts_test
