#pragma once
// A candidate's parse tree (tree-sitter, CUDA grammar, which also reads C++), shared by the
// static checks and the mutation generator.
#include <tree_sitter/api.h>

#include <cstdint>
#include <memory>
#include <string>

namespace kforge {

struct SourceTreeDeleter {
  void operator()(TSTree* t) const { ts_tree_delete(t); }
};
using SourceTree = std::unique_ptr<TSTree, SourceTreeDeleter>;

/// Parses `source`; nullptr when the parse does not finish within `timeout_micros` (hostile
/// sources, tens of thousands of unbalanced brackets, can make error recovery slow).
SourceTree ParseSource(const std::string& source, uint64_t timeout_micros);

/// The text of `source` a node spans.
std::string NodeText(const std::string& source, TSNode n);
/// A node's type name ("function_definition", ...).
std::string NodeType(TSNode n);
/// A node's child by field name (a null node when it has none).
TSNode NodeField(TSNode n, const char* field);

}  // namespace kforge
