#include "cubescale/systree/kind.hpp"

namespace cubescale::systree {

std::string_view kind_name(Kind k) {
  switch (k) {
    case Kind::Node: return "node";
    case Kind::LocationGroup: return "location_group";
    case Kind::Location: return "location";
  }
  return "?";
}

std::optional<Kind> kind_from_name(std::string_view name) {
  if (name == "node") return Kind::Node;
  if (name == "location_group") return Kind::LocationGroup;
  if (name == "location") return Kind::Location;
  return std::nullopt;
}

Kind kind_of_class(std::string_view cls) {
  if (cls == "process" || cls == "accelerator") return Kind::LocationGroup;
  if (cls == "thread" || cls == "cpu_thread" || cls == "gpu_stream" || cls == "accelerator_stream" ||
      cls == "metric")
    return Kind::Location;
  return Kind::Node;
}

}  // namespace cubescale::systree
