#include "verify/source_tree.h"

#include <cstring>

#include "core/check.h"

extern "C" const TSLanguage* tree_sitter_cuda();

namespace kforge {

SourceTree ParseSource(const std::string& source, uint64_t timeout_micros) {
  struct ParserDeleter {
    void operator()(TSParser* p) const { ts_parser_delete(p); }
  };
  std::unique_ptr<TSParser, ParserDeleter> parser(ts_parser_new());
  KF_CHECK(ts_parser_set_language(parser.get(), tree_sitter_cuda()));
  ts_parser_set_timeout_micros(parser.get(), timeout_micros);
  return SourceTree(ts_parser_parse_string(parser.get(), nullptr, source.data(), static_cast<uint32_t>(source.size())));
}

std::string NodeText(const std::string& source, TSNode n) {
  return source.substr(ts_node_start_byte(n), ts_node_end_byte(n) - ts_node_start_byte(n));
}

std::string NodeType(TSNode n) { return ts_node_type(n); }

TSNode NodeField(TSNode n, const char* field) {
  return ts_node_child_by_field_name(n, field, static_cast<uint32_t>(std::strlen(field)));
}

}  // namespace kforge
