#include "base/secret_box.h"

#include <openssl/evp.h>

#include <cstdlib>
#include <memory>

#include "base/encoding.h"
#include "base/random.h"

namespace webhookd {
namespace {

constexpr std::string_view kPrefix = "wse1:";
constexpr std::string_view kPlainPrefix = "wsp1:";
constexpr size_t kKeyIdChars = 8;
constexpr size_t kNonceBytes = 12;
constexpr size_t kTagBytes = 16;

using CipherCtx = std::unique_ptr<EVP_CIPHER_CTX, decltype(&EVP_CIPHER_CTX_free)>;

CipherCtx NewCtx() {
  CipherCtx ctx(EVP_CIPHER_CTX_new(), &EVP_CIPHER_CTX_free);
  if (!ctx) abort();  // out of memory
  return ctx;
}

const unsigned char* Bytes(std::string_view s) {
  return reinterpret_cast<const unsigned char*>(s.data());
}

// "wse1:<id>": authenticated with the ciphertext, so a value cannot be relabelled.
std::string Header(std::string_view key_id) { return std::string(kPrefix) + std::string(key_id); }

std::unexpected<Error> Unopenable(std::string_view why) {
  return Fail(ErrorKind::kInternal, "a stored secret cannot be decrypted: " + std::string(why));
}

}  // namespace

std::string EncryptionKeyId(std::string_view key) {
  return HexEncode(Sha256(key)).substr(0, kKeyIdChars);
}

SecretBox::SecretBox(std::optional<std::string> key, std::optional<std::string> previous,
                     NonceSource nonces)
    : key_(std::move(key)), previous_(std::move(previous)), nonces_(std::move(nonces)) {
  if (key_) key_id_ = EncryptionKeyId(*key_);
  if (previous_) previous_id_ = EncryptionKeyId(*previous_);
  if (!nonces_) nonces_ = SecureRandomBytes;
}

bool SecretBox::IsSealed(std::string_view stored) {
  return stored.starts_with(kPrefix) && stored.size() > kPrefix.size() + kKeyIdChars &&
         stored[kPrefix.size() + kKeyIdChars] == ':';
}

bool SecretBox::IsPlain(std::string_view stored) {
  return !stored.starts_with(kPrefix) && !stored.starts_with(kPlainPrefix);
}

std::string_view SecretBox::KeyIdOf(std::string_view stored) {
  if (!IsSealed(stored)) return {};
  return stored.substr(kPrefix.size(), kKeyIdChars);
}

bool SecretBox::IsCurrent(std::string_view stored) const {
  return key_ && KeyIdOf(stored) == key_id_;
}

std::string SecretBox::Seal(std::string_view plain) const {
  if (!key_) {
    if (IsPlain(plain)) return std::string(plain);
    return std::string(kPlainPrefix) + std::string(plain);
  }
  const std::string nonce = nonces_(kNonceBytes);
  const std::string aad = Header(key_id_);
  std::string out = nonce;
  out.resize(kNonceBytes + plain.size() + kTagBytes);
  auto* cipher = reinterpret_cast<unsigned char*>(out.data()) + kNonceBytes;
  CipherCtx ctx = NewCtx();
  int n = 0;
  // Every step can only fail on a broken OpenSSL or memory: a sealed value is never
  // written half-made.
  if (EVP_EncryptInit_ex(ctx.get(), EVP_aes_256_gcm(), nullptr, Bytes(*key_), Bytes(nonce)) != 1 ||
      EVP_EncryptUpdate(ctx.get(), nullptr, &n, Bytes(aad), static_cast<int>(aad.size())) != 1 ||
      EVP_EncryptUpdate(ctx.get(), cipher, &n, Bytes(plain), static_cast<int>(plain.size())) != 1 ||
      EVP_EncryptFinal_ex(ctx.get(), cipher + n, &n) != 1 ||
      EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_GET_TAG, kTagBytes, cipher + plain.size()) != 1) {
    abort();
  }
  return aad + ":" + Base64Encode(out);
}

Result<std::string> SecretBox::Open(std::string_view stored) const {
  if (stored.starts_with(kPlainPrefix)) return std::string(stored.substr(kPlainPrefix.size()));
  if (!IsSealed(stored)) return std::string(stored);
  const std::string_view id = KeyIdOf(stored);
  const std::string* key = nullptr;
  if (key_ && id == key_id_) {
    key = &*key_;
  } else if (previous_ && id == previous_id_) {
    key = &*previous_;
  } else {
    return Unopenable("it was sealed with encryption key " + std::string(id) +
                      ", which is neither WEBHOOKD_ENCRYPTION_KEY nor "
                      "WEBHOOKD_ENCRYPTION_KEY_PREVIOUS");
  }
  const std::optional<std::string> raw =
      Base64Decode(stored.substr(kPrefix.size() + kKeyIdChars + 1));
  if (!raw || raw->size() < kNonceBytes + kTagBytes) return Unopenable("it is malformed");
  const std::string aad = Header(id);
  const size_t length = raw->size() - kNonceBytes - kTagBytes;
  const std::string_view cipher = std::string_view(*raw).substr(kNonceBytes, length);
  std::string tag = raw->substr(kNonceBytes + length);
  std::string plain(length, '\0');
  auto* out = reinterpret_cast<unsigned char*>(plain.data());
  CipherCtx ctx = NewCtx();
  int n = 0;
  if (EVP_DecryptInit_ex(ctx.get(), EVP_aes_256_gcm(), nullptr, Bytes(*key), Bytes(*raw)) != 1 ||
      EVP_DecryptUpdate(ctx.get(), nullptr, &n, Bytes(aad), static_cast<int>(aad.size())) != 1 ||
      EVP_DecryptUpdate(ctx.get(), out, &n, Bytes(cipher), static_cast<int>(cipher.size())) != 1 ||
      EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_TAG, kTagBytes, tag.data()) != 1 ||
      EVP_DecryptFinal_ex(ctx.get(), out + n, &n) != 1) {
    return Unopenable("it does not authenticate under encryption key " + std::string(id));
  }
  return plain;
}

}  // namespace webhookd
