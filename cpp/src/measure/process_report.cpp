#include "cubescale/measure/process_report.hpp"

#include <unistd.h>

#include <stdexcept>

#include "cubescale/cube/assemble.hpp"
#include "cubescale/cube/report.hpp"
#include "cubescale/cube/writer.hpp"

namespace cubescale::measure {

namespace {
std::string this_host() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0 || name[0] == '\0') return "localhost";
  return name;
}
}  // namespace

void write_process_report(const profile::LocalProfile& profile, const std::string& path, std::string host,
                          const std::string& process) {
  profile.validate();
  systree::SingleNodeTree system;
  const auto machine = system.add_root(systree::Kind::Node, "machine", "machine");
  const auto node = system.add_child(machine, systree::Kind::Node, "node", host.empty() ? this_host() : host);
  const auto group = system.add_child(node, systree::Kind::LocationGroup, "process", process);
  for (const auto& location : profile.locations)
    system.add_child(group, systree::Kind::Location, location.type, location.name);
  cube::CallTreeParts calls{profile.cnode_parents, profile.cnode_regions, profile.cnode_parameters};
  // The profile's metrics and call tree are in preorder and its locations in the tree's
  // order, so its matrices are the report's as they are.
  cube::Report report(cube::assemble_definitions(profile.metrics, profile.regions, std::move(calls), system));
  for (std::size_t m = 0; m < profile.values.size(); ++m) report.set_values(m, profile.values[m]);
  cube::write_cubex(report, path);
}

void write_process_report(const Recorder& recorder, const std::string& path, std::string host,
                          const std::string& process, std::optional<RegionId> program) {
  write_process_report(recorder.to_profile(program), path, std::move(host), process);
}

}  // namespace cubescale::measure
