// libFuzzer target for the system tree parsers: the binary sequence tree and the name
// stream. Any input must end in a FormatError or a valid tree that round-trips; any other
// exception, crash or sanitizer report is a bug.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "cubescale/common/format_error.hpp"
#include "cubescale/systree/names.hpp"
#include "cubescale/systree/serialize.hpp"

using namespace cubescale;
using namespace cubescale::systree;

namespace {
void check_tree(std::string_view bytes) {
  SystemTree tree;
  try {
    tree = deserialize(bytes, "fuzz");
  } catch (const FormatError&) {
    return;
  }
  // A valid tree: its own bytes read back equal, and enumeration is consistent.
  if (!(deserialize(serialize(tree)) == tree)) std::abort();
  for (KindMask mask : {kNodes, kLocationGroups, kLocations, kAllKinds}) {
    const auto total = tree.total(mask);
    if (total == 0) continue;
    for (std::uint64_t i : {std::uint64_t(0), total / 2, total - 1})
      if (tree.index_of(tree.path_of(i, mask), mask) != i) std::abort();
  }
  (void)to_json(tree, -1);
  (void)single_serialized_size(tree);
}

void check_names(std::string_view bytes) {
  try {
    const auto names = NameMap::deserialize(bytes, "fuzz");
    if (NameMap::deserialize(names.serialize(3)).size() != names.size()) std::abort();
  } catch (const FormatError&) {
  }
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  check_tree(bytes);
  check_names(bytes);
  return 0;
}
