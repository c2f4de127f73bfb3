#pragma once
// The full output tensors of a validation's trials, when small, as one artifact.
//
// Design note:
//  - Every trial records each output's SHA-256 (the verdict, and the run's `trials`
//    artifact). The verifier also keeps the bytes of outputs up to 64 KiB (1 MiB per
//    validation, Verdict::KeepOutput); a run stores them as one artifact per validation —
//    a CBOR map from that SHA-256 to the bytes — named by the validated event's `tensors`
//    field. One artifact, not one per tensor: a validation runs dozens of trials, and each
//    artifact is synced on its own.
//  - A replay serves a pinned verdict with the bundle it recorded, so the replay stores the
//    same bytes and its events name the same artifact.
//  - Reading checks every entry: a name that is not a SHA-256 or bytes that do not hash to
//    it make the bundle unreadable (UsageError), never a wrong tensor.
#include <map>
#include <string>

namespace kforge {

using KeptOutputs = std::map<std::string, std::string>;  ///< SHA-256 hex → the tensor's bytes

/// The bundle's bytes (deterministic: the same outputs give the same bytes).
std::string EncodeKeptOutputs(const KeptOutputs& outputs);
/// Throws UsageError naming what is wrong when `bytes` is not a bundle EncodeKeptOutputs wrote.
KeptOutputs DecodeKeptOutputs(const std::string& bytes);

}  // namespace kforge
