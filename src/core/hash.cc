#include "core/hash.h"

#include <openssl/evp.h>

#include <memory>

#include "core/check.h"

namespace kforge {

std::string Sha256Hex(std::string_view data) {
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  KF_CHECK(ctx != nullptr);
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  KF_CHECK(EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) == 1);
  KF_CHECK(EVP_DigestUpdate(ctx.get(), data.data(), data.size()) == 1);
  KF_CHECK(EVP_DigestFinal_ex(ctx.get(), digest, &len) == 1);
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(len * 2);
  for (unsigned i = 0; i < len; ++i) {
    out.push_back(kHex[digest[i] >> 4]);
    out.push_back(kHex[digest[i] & 15]);
  }
  return out;
}

}  // namespace kforge
