#include "verify/source_tree.h"

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

}  // namespace kforge
