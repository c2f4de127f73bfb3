#include "engine/kept_outputs.h"

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/hash.h"
#include "record/artifact_store.h"

namespace kforge {

std::string EncodeKeptOutputs(const KeptOutputs& outputs) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [sha, bytes] : outputs)
    j[sha] = nlohmann::json::binary(std::vector<std::uint8_t>(bytes.begin(), bytes.end()));
  const std::vector<std::uint8_t> cbor = nlohmann::json::to_cbor(j);
  return std::string(cbor.begin(), cbor.end());
}

KeptOutputs DecodeKeptOutputs(const std::string& bytes) {
  const nlohmann::json j = nlohmann::json::from_cbor(bytes, /*strict=*/true, /*allow_exceptions=*/false);
  if (!j.is_object()) throw UsageError("the kept output tensors are not a CBOR map; the artifact is damaged");
  KeptOutputs out;
  for (const auto& [sha, value] : j.items()) {
    if (!IsArtifactHash(sha) || !value.is_binary())
      throw UsageError(
          "the kept output tensors hold an entry that is not a SHA-256 and its bytes; the artifact is damaged");
    const auto& bin = value.get_binary();
    std::string tensor(bin.begin(), bin.end());
    if (Sha256Hex(tensor) != sha)
      throw UsageError("a kept output tensor does not hash to its name " + sha.substr(0, 12) +
                       "; the artifact is damaged");
    out.emplace(sha, std::move(tensor));
  }
  return out;
}

}  // namespace kforge
