#include "cubescale/systree/shapes.hpp"

#include <charconv>
#include <stdexcept>

namespace cubescale::systree {

std::string shape_preset(std::string_view name) {
  if (name == "juqueen") return "rack:28 midplane:2 nodeboard:16 node:32 process:64 thread:1";
  if (name == "juqueen-threads") return "rack:28 midplane:2 nodeboard:16 node:32 process:64 thread:4";
  if (name == "juqueen-rack") return "rack:1 midplane:2 nodeboard:16 node:32 process:64 thread:1";
  return {};
}

std::vector<Level> parse_shape(std::string_view spec) {
  if (auto preset = shape_preset(spec); !preset.empty()) return parse_shape(preset);
  std::vector<Level> levels;
  std::size_t pos = 0;
  while (pos < spec.size()) {
    while (pos < spec.size() && (spec[pos] == ' ' || spec[pos] == ',' || spec[pos] == '>')) ++pos;
    if (pos == spec.size()) break;
    std::size_t end = pos;
    while (end < spec.size() && spec[end] != ' ' && spec[end] != ',' && spec[end] != '>') ++end;
    const auto token = spec.substr(pos, end - pos);
    const auto colon = token.find(':');
    if (colon == std::string_view::npos || colon == 0)
      throw std::invalid_argument("shape level '" + std::string(token) + "' is not class:count");
    std::uint64_t count = 0;
    const auto digits = token.substr(colon + 1);
    auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), count);
    if (ec != std::errc() || p != digits.data() + digits.size() || count == 0)
      throw std::invalid_argument("shape level '" + std::string(token) + "' needs a positive count");
    levels.push_back({std::string(token.substr(0, colon)), count});
    pos = end;
  }
  if (levels.empty()) throw std::invalid_argument("empty shape");
  return levels;
}

SystemTree regular_sequence(const std::vector<Level>& levels) {
  SystemTree tree;
  std::uint32_t parent = tree.add_root(Kind::Node, "machine");
  for (const auto& level : levels) parent = tree.add_record(parent, kind_of_class(level.cls), level.cls, level.count);
  tree.canonicalize();
  return tree;
}

SystemTree figure4_sequence() {
  SystemTree tree;
  const auto machine = tree.add_root(Kind::Node, "machine");
  const auto cpu_nodes = tree.add_record(machine, Kind::Node, "node", 16);
  const auto cpu_proc = tree.add_record(cpu_nodes, Kind::LocationGroup, "process", 4);
  tree.add_record(cpu_proc, Kind::Location, "thread", 4);
  const auto gpu_nodes = tree.add_record(machine, Kind::Node, "node", 16);
  const auto gpu_proc = tree.add_record(gpu_nodes, Kind::LocationGroup, "process", 4);
  tree.add_record(gpu_proc, Kind::Location, "thread", 2);
  tree.add_record(gpu_proc, Kind::Location, "gpu_stream", 1);
  tree.canonicalize();
  return tree;
}

}  // namespace cubescale::systree
