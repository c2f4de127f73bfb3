#include "engine/kept_outputs.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "core/hash.h"

namespace kforge {
namespace {

TEST(KeptOutputs, RoundTripsAndIsDeterministic) {
  KeptOutputs in;
  for (std::string bytes : {std::string("\0\1\2\3", 4), std::string(1000, '\x7f'), std::string()})
    in.emplace(Sha256Hex(bytes), bytes);
  const std::string encoded = EncodeKeptOutputs(in);
  EXPECT_EQ(encoded, EncodeKeptOutputs(in));
  EXPECT_EQ(DecodeKeptOutputs(encoded), in);
}

TEST(KeptOutputs, DamageIsRefusedNeverAWrongTensor) {
  KeptOutputs in;
  const std::string tensor(256, 'a');
  in.emplace(Sha256Hex(tensor), tensor);
  const std::string good = EncodeKeptOutputs(in);
  EXPECT_THROW(DecodeKeptOutputs("not cbor"), UsageError);
  KeptOutputs misnamed{{Sha256Hex("other"), tensor}};
  EXPECT_THROW(DecodeKeptOutputs(EncodeKeptOutputs(misnamed)), UsageError);
  KeptOutputs not_a_hash{{"../../etc/passwd", tensor}};
  EXPECT_THROW(DecodeKeptOutputs(EncodeKeptOutputs(not_a_hash)), UsageError);
  // Every single-byte flip either is refused or decodes to exactly the original.
  for (size_t i = 0; i < good.size(); ++i) {
    std::string bad = good;
    bad[i] = static_cast<char>(bad[i] ^ 0x5a);
    try {
      EXPECT_EQ(DecodeKeptOutputs(bad), in) << "byte " << i;
    } catch (const UsageError&) {
    }
  }
}

}  // namespace
}  // namespace kforge
