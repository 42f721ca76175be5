#include "cubescale/trace/reader.hpp"

#include <otf2/otf2.h>

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <cstdio>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <mutex>
#include <system_error>
#include <unordered_map>

#include "cubescale/common/format_error.hpp"
#include "cubescale/cube/text.hpp"

namespace cubescale::trace {

static_assert(sizeof(MetricValue) == sizeof(OTF2_MetricValue));
static_assert(sizeof(OTF2_Type) == sizeof(std::uint8_t));

namespace {

// OTF2 prints its errors to stderr by default; we keep the last message of this thread and
// put it into the FormatError instead.
thread_local std::string last_otf2_message;

OTF2_ErrorCode keep_message(void*, const char*, uint64_t, const char*, OTF2_ErrorCode code, const char* format,
                            va_list va) {
  char buffer[512];
  std::vsnprintf(buffer, sizeof buffer, format ? format : "", va);
  last_otf2_message = buffer;
  return code;
}

void silence_otf2() {
  static std::once_flag once;
  std::call_once(once, [] { OTF2_Error_RegisterCallback(keep_message, nullptr); });
}

std::string describe(OTF2_ErrorCode code) {
  std::string text = OTF2_Error_GetDescription(code);
  if (!last_otf2_message.empty()) text += ": " + last_otf2_message;
  last_otf2_message.clear();
  return text;
}

struct ReaderCloser {
  void operator()(OTF2_Reader* r) const { OTF2_Reader_Close(r); }
};
using ReaderPtr = std::unique_ptr<OTF2_Reader, ReaderCloser>;

ReaderPtr open_reader(const std::string& path) {
  silence_otf2();
  last_otf2_message.clear();
  std::FILE* probe = std::fopen(path.c_str(), "rb");
  if (!probe) throw FormatError(path, "anchor", 0, "cannot open the anchor file");
  std::fclose(probe);
  ReaderPtr reader(OTF2_Reader_Open(path.c_str()));
  if (!reader) throw FormatError(path, "anchor", 0, "not an OTF2 anchor file" +
                                                        (last_otf2_message.empty() ? "" : ": " + last_otf2_message));
  if (auto rc = OTF2_Reader_SetSerialCollectiveCallbacks(reader.get()); rc != OTF2_SUCCESS)
    throw FormatError(path, "anchor", 0, describe(rc));
  return reader;
}

// What an anchor file of OTF2's layout holds up to its end-of-file record, from the values
// libotf2 read from it: a buffer header (2 bytes), "OTF2\0", the anchor format, 38 bytes of
// numbers (versions, chunk sizes, substrate, compression, counts), machine, creator and
// description; from format 2 on the properties (a count and name/value pairs) and the trace
// id; from format 3 on the counts of snapshots and thumbnails and the end-of-file record.
std::uint64_t anchor_content_bytes(OTF2_Reader* reader, std::uint8_t format) {
  std::uint64_t bytes = 2 + 5 + 1 + 38;
  const auto text = [&](OTF2_ErrorCode (*get)(OTF2_Reader*, char**)) {
    char* s = nullptr;
    if (get(reader, &s) == OTF2_SUCCESS && s) bytes += std::strlen(s);
    std::free(s);
    bytes += 1;
  };
  text(OTF2_Reader_GetMachineName);
  text(OTF2_Reader_GetCreator);
  text(OTF2_Reader_GetDescription);
  if (format > 1) {
    std::uint32_t n = 0;
    char** names = nullptr;
    if (OTF2_Reader_GetPropertyNames(reader, &n, &names) == OTF2_SUCCESS && names) {
      for (std::uint32_t i = 0; i < n; ++i) {
        char* value = nullptr;
        if (OTF2_Reader_GetProperty(reader, names[i], &value) == OTF2_SUCCESS && value) bytes += std::strlen(value);
        std::free(value);
        bytes += std::strlen(names[i]) + 2;
      }
    }
    std::free(names);
    bytes += 4 + 8;
  }
  if (format > 2) bytes += 4 + 4 + 1;
  return bytes;
}

// libotf2 reads the anchor file up to its end-of-file record and ignores what follows, so
// 10 MB of garbage after traces.otf2 read "fine". Files OTF2 writes end with the buffer's
// closing records (2-3 bytes) after the content: more than kAnchorTail bytes is refused.
constexpr std::uint64_t kAnchorTail = 8;

void check_anchor_ends(OTF2_Reader* reader, const std::string& path) {
  std::error_code ec;
  const std::uint64_t size = std::filesystem::file_size(path, ec);
  if (ec) return;  // not a plain file: libotf2 read what it could
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return;
  unsigned char head[8] = {};
  const auto got = std::fread(head, 1, sizeof head, f);
  std::fclose(f);
  if (got < sizeof head) return;  // libotf2 read it: cannot happen
  const auto content = anchor_content_bytes(reader, head[7]);
  if (size > content + kAnchorTail)
    throw FormatError(path, "anchor", content,
                      std::to_string(size - content) + " bytes follow the anchor's content of " + std::to_string(content) +
                          " bytes (an OTF2 anchor ends with at most " + std::to_string(kAnchorTail) + ")");
}

std::string upper_snake(std::string_view camel) {
  std::string out;
  for (std::size_t i = 0; i < camel.size(); ++i) {
    const char c = camel[i];
    if (c >= 'A' && c <= 'Z') {
      if (i > 0) out += '_';
      out += c;
    } else {
      out += static_cast<char>(c - 'a' + 'A');
    }
  }
  return out;
}

const std::vector<std::string>& event_type_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
#define CUBESCALE_TRACE_NAME(name) v.push_back(upper_snake(#name));
    CUBESCALE_TRACE_EVENT_TYPES(CUBESCALE_TRACE_NAME)
#undef CUBESCALE_TRACE_NAME
    // Where otf2-print's name is not the callback's: its record names (OTF2 3.0).
    v[std::size_t(EventType::ParameterInt)] = "PARAMETER_INT64";
    v[std::size_t(EventType::ParameterUnsignedInt)] = "PARAMETER_UINT64";
    v[std::size_t(EventType::IoChangeStatusFlags)] = "IO_CHANGE_FLAGS";
    return v;
  }();
  return names;
}

// ---- global definitions ------------------------------------------------------------------

// References between definitions and to strings are resolved after all definitions are read:
// OTF2 does not promise that a string comes before its first use.
struct DefContext {
  Definitions* defs;
  std::vector<std::function<void()>> pending;
  std::string error;
  // Node properties and domains may come before their node.
  std::vector<std::tuple<std::uint32_t, std::uint32_t, std::uint8_t, OTF2_AttributeValue>> properties;
  std::vector<std::pair<std::uint32_t, std::uint8_t>> domains;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> instance_classes;  // instance index, class id
};

DefContext& ctx(void* ud) { return *static_cast<DefContext*>(ud); }

// A string by id; "" for OTF2_UNDEFINED_STRING; an error noted for an undefined one.
std::string resolve(DefContext& c, OTF2_StringRef ref, const char* what) {
  if (ref == OTF2_UNDEFINED_STRING) return {};
  const auto i = c.defs->string_index.find(ref);
  if (i == kNone) {
    if (c.error.empty()) c.error = std::string(what) + " names undefined string " + std::to_string(ref);
    return {};
  }
  return c.defs->strings[i];
}

std::uint32_t lookup(DefContext& c, const IdIndex& index, std::uint64_t ref, std::uint64_t undefined, const char* what) {
  if (ref == undefined) return kNone;
  // Tolerated, as otf2-print does (OTF2's own integrity trace has locations in an undefined
  // group): noted in the definitions' warnings, the reference left undefined.
  const auto i = index.find(ref);
  if (i == kNone && c.defs->warnings.size() < 100)
    c.defs->warnings.push_back(std::string("reference to undefined ") + what + " " + std::to_string(ref));
  return i;
}

std::string location_type_name(OTF2_LocationType t) {
  switch (t) {
    case OTF2_LOCATION_TYPE_CPU_THREAD: return "cpu_thread";
    case OTF2_LOCATION_TYPE_ACCELERATOR_STREAM: return "accelerator_stream";
    case OTF2_LOCATION_TYPE_METRIC: return "metric";
    default: return "unknown";
  }
}

std::string group_type_name(OTF2_GroupType t) {
  switch (t) {
    case OTF2_GROUP_TYPE_LOCATIONS: return "locations";
    case OTF2_GROUP_TYPE_REGIONS: return "regions";
    case OTF2_GROUP_TYPE_METRIC: return "metric";
    case OTF2_GROUP_TYPE_COMM_LOCATIONS: return "comm_locations";
    case OTF2_GROUP_TYPE_COMM_GROUP: return "comm_group";
    case OTF2_GROUP_TYPE_COMM_SELF: return "comm_self";
    default: return "unknown";
  }
}

std::string type_name(OTF2_Type t) {
  switch (t) {
    case OTF2_TYPE_UINT8: case OTF2_TYPE_UINT16: case OTF2_TYPE_UINT32: case OTF2_TYPE_UINT64: return "uint64";
    case OTF2_TYPE_INT8: case OTF2_TYPE_INT16: case OTF2_TYPE_INT32: case OTF2_TYPE_INT64: return "int64";
    case OTF2_TYPE_FLOAT: case OTF2_TYPE_DOUBLE: return "double";
    case OTF2_TYPE_STRING: return "string";
    default: return "ref" + std::to_string(unsigned(t));
  }
}

std::string metric_mode_name(OTF2_MetricMode m) {
  std::string value;
  switch (m & OTF2_METRIC_VALUE_MASK) {
    case OTF2_METRIC_VALUE_ACCUMULATED: value = "accumulated"; break;
    case OTF2_METRIC_VALUE_ABSOLUTE: value = "absolute"; break;
    case OTF2_METRIC_VALUE_RELATIVE: value = "relative"; break;
    default: value = "value" + std::to_string(m & OTF2_METRIC_VALUE_MASK);
  }
  switch (m & OTF2_METRIC_TIMING_MASK) {
    case OTF2_METRIC_TIMING_START: return value + "_start";
    case OTF2_METRIC_TIMING_POINT: return value + "_point";
    case OTF2_METRIC_TIMING_LAST: return value + "_last";
    case OTF2_METRIC_TIMING_NEXT: return value + "_next";
    default: return value;
  }
}

const char* const kDomains[] = {"machine", "shared_memory", "numa",  "socket", "cache",
                                "core",    "pu",            "accelerator_device", "networking_device"};

// A clock of 0 ticks per second cannot turn ticks into seconds. Reading it as 1 tick/s made a
// 361 ns trace last 361 s; the events' order, visits and bytes are still right, so the trace is
// read with nanosecond ticks (Score-P's default timer, clock_gettime, counts them; its others
// count near that) and the guess is said in the warnings.
constexpr std::uint64_t kGuessedResolution = 1000000000;

OTF2_CallbackCode on_clock(void* ud, uint64_t resolution, uint64_t offset, uint64_t length, uint64_t) {
  auto& defs = *ctx(ud).defs;
  if (resolution == 0)
    defs.warnings.push_back("the clock properties give 0 ticks per second: times are read as nanoseconds (" +
                            std::to_string(kGuessedResolution) + " ticks per second), a guess");
  defs.clock = {resolution ? resolution : kGuessedResolution, offset, length};
  return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode on_string(void* ud, OTF2_StringRef self, const char* s) {
  auto& d = *ctx(ud).defs;
  d.string_index.add(self, static_cast<std::uint32_t>(d.strings.size()));
  // OTF2 strings carry no encoding; names reach Python strings and reports as UTF-8, so a
  // name in another encoding (a Latin-1 file path) keeps its ASCII and gets U+FFFD elsewhere.
  const std::string_view text(s ? s : "");
  std::size_t bad = 0;
  if (cube::valid_utf8(text, bad)) {
    d.strings.emplace_back(text);
  } else {
    d.strings.push_back(cube::replace_invalid_utf8(text));
    d.warnings.push_back("string " + std::to_string(self) + " is not UTF-8 (byte " + std::to_string(bad) +
                         "): invalid bytes replaced by U+FFFD");
  }
  return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode on_node(void* ud, OTF2_SystemTreeNodeRef self, OTF2_StringRef name, OTF2_StringRef cls,
                          OTF2_SystemTreeNodeRef parent) {
  auto& c = ctx(ud);
  const auto i = static_cast<std::uint32_t>(c.defs->system_tree_nodes.size());
  c.defs->node_index.add(self, i);
  c.defs->system_tree_nodes.push_back({self, {}, {}, kNone, {}, {}});
  c.pending.push_back([&c, i, name, cls, parent] {
    auto& n = c.defs->system_tree_nodes[i];
    n.name = resolve(c, name, "system tree node");
    n.class_name = resolve(c, cls, "system tree node");
    n.parent = lookup(c, c.defs->node_index, parent, OTF2_UNDEFINED_SYSTEM_TREE_NODE, "system tree node");
  });
  return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode on_node_property(void* ud, OTF2_SystemTreeNodeRef node, OTF2_StringRef name, OTF2_Type type,
                                   OTF2_AttributeValue value) {
  ctx(ud).properties.emplace_back(node, name, type, value);
  return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode on_node_domain(void* ud, OTF2_SystemTreeNodeRef node, OTF2_SystemTreeDomain domain) {
  ctx(ud).domains.emplace_back(node, domain);
  return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode on_location_group(void* ud, OTF2_LocationGroupRef self, OTF2_StringRef name,
                                    OTF2_LocationGroupType type, OTF2_SystemTreeNodeRef parent,
                                    OTF2_LocationGroupRef creator) {
  auto& c = ctx(ud);
  const auto i = static_cast<std::uint32_t>(c.defs->location_groups.size());
  c.defs->location_group_index.add(self, i);
  c.defs->location_groups.push_back({self, {},
                                     type == OTF2_LOCATION_GROUP_TYPE_PROCESS       ? "process"
                                     : type == OTF2_LOCATION_GROUP_TYPE_ACCELERATOR ? "accelerator"
                                                                                    : "unknown",
                                     kNone, kNone});
  c.pending.push_back([&c, i, name, parent, creator] {
    auto& g = c.defs->location_groups[i];
    g.name = resolve(c, name, "location group");
    g.system_tree_node = lookup(c, c.defs->node_index, parent, OTF2_UNDEFINED_SYSTEM_TREE_NODE, "system tree node");
    g.creator = lookup(c, c.defs->location_group_index, creator, OTF2_UNDEFINED_LOCATION_GROUP, "location group");
  });
  return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode on_location(void* ud, OTF2_LocationRef self, OTF2_StringRef name, OTF2_LocationType type,
                              uint64_t events, OTF2_LocationGroupRef group) {
  auto& c = ctx(ud);
  const auto i = static_cast<std::uint32_t>(c.defs->locations.size());
  c.defs->location_index.add(self, i);
  c.defs->locations.push_back({self, {}, location_type_name(type), events, kNone});
  c.pending.push_back([&c, i, name, group] {
    auto& l = c.defs->locations[i];
    l.name = resolve(c, name, "location");
    l.group = lookup(c, c.defs->location_group_index, group, OTF2_UNDEFINED_LOCATION_GROUP, "location group");
  });
  return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode on_region(void* ud, OTF2_RegionRef self, OTF2_StringRef name, OTF2_StringRef canonical,
                            OTF2_StringRef description, OTF2_RegionRole role, OTF2_Paradigm paradigm,
                            OTF2_RegionFlag, OTF2_StringRef file, uint32_t begin, uint32_t end) {
  auto& c = ctx(ud);
  const auto i = static_cast<std::uint32_t>(c.defs->regions.size());
  c.defs->region_index.add(self, i);
  Region r;
  r.id = self;
  r.role = region_role_name(role);
  r.paradigm = paradigm_name(paradigm);
  r.begin_line = begin;
  r.end_line = end;
  c.defs->regions.push_back(std::move(r));
  c.pending.push_back([&c, i, name, canonical, description, file] {
    auto& r = c.defs->regions[i];
    r.name = resolve(c, name, "region");
    r.canonical_name = resolve(c, canonical, "region");
    r.description = resolve(c, description, "region");
    r.file = resolve(c, file, "region");
  });
  return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode on_group(void* ud, OTF2_GroupRef self, OTF2_StringRef name, OTF2_GroupType type,
                           OTF2_Paradigm paradigm, OTF2_GroupFlag, uint32_t n, const uint64_t* members) {
  auto& c = ctx(ud);
  const auto i = static_cast<std::uint32_t>(c.defs->groups.size());
  c.defs->group_index.add(self, i);
  c.defs->groups.push_back({self, {}, group_type_name(type), paradigm_name(paradigm),
                            std::vector<std::uint64_t>(members, members + n)});
  c.pending.push_back([&c, i, name] { c.defs->groups[i].name = resolve(c, name, "group"); });
  return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode on_comm(void* ud, OTF2_CommRef self, OTF2_StringRef name, OTF2_GroupRef group, OTF2_CommRef parent,
                          OTF2_CommFlag) {
  auto& c = ctx(ud);
  const auto i = static_cast<std::uint32_t>(c.defs->communicators.size());
  c.defs->communicator_index.add(self, i);
  c.defs->communicators.push_back({self, {}, kNone, kNone});
  c.pending.push_back([&c, i, name, group, parent] {
    auto& m = c.defs->communicators[i];
    m.name = resolve(c, name, "communicator");
    m.group = lookup(c, c.defs->group_index, group, OTF2_UNDEFINED_GROUP, "group");
    m.parent = lookup(c, c.defs->communicator_index, parent, OTF2_UNDEFINED_COMM, "communicator");
  });
  return OTF2_CALLBACK_SUCCESS;
}

#if OTF2_VERSION_MAJOR >= 3
// Score-P 8 and later: MPI inter-communicators (MPI_Intercomm_create), in the communicators'
// reference space; their events' peers are ranks of the other group.
OTF2_CallbackCode on_inter_comm(void* ud, OTF2_CommRef self, OTF2_StringRef name, OTF2_GroupRef group_a,
                                OTF2_GroupRef group_b, OTF2_CommRef common, OTF2_CommFlag) {
  auto& c = ctx(ud);
  const auto i = static_cast<std::uint32_t>(c.defs->communicators.size());
  c.defs->communicator_index.add(self, i);
  c.defs->communicators.push_back({self, {}, kNone, kNone, true});
  c.pending.push_back([&c, i, name, group_a, group_b, common] {
    auto& m = c.defs->communicators[i];
    m.name = resolve(c, name, "inter-communicator");
    m.group = lookup(c, c.defs->group_index, group_a, OTF2_UNDEFINED_GROUP, "group");
    m.remote_group = lookup(c, c.defs->group_index, group_b, OTF2_UNDEFINED_GROUP, "group");
    m.parent = lookup(c, c.defs->communicator_index, common, OTF2_UNDEFINED_COMM, "communicator");
  });
  return OTF2_CALLBACK_SUCCESS;
}
#endif

OTF2_CallbackCode on_metric_member(void* ud, OTF2_MetricMemberRef self, OTF2_StringRef name,
                                   OTF2_StringRef description, OTF2_MetricType type, OTF2_MetricMode mode,
                                   OTF2_Type value_type, OTF2_Base base, int64_t exponent, OTF2_StringRef unit) {
  auto& c = ctx(ud);
  const auto i = static_cast<std::uint32_t>(c.defs->metric_members.size());
  c.defs->member_index.add(self, i);
  MetricMember m;
  m.id = self;
  m.metric_type = type == OTF2_METRIC_TYPE_PAPI     ? "papi"
                  : type == OTF2_METRIC_TYPE_RUSAGE ? "rusage"
                  : type == OTF2_METRIC_TYPE_USER   ? "user"
                                                    : "other";
  m.mode = metric_mode_name(mode);
  m.accumulated = (mode & OTF2_METRIC_VALUE_MASK) == OTF2_METRIC_VALUE_ACCUMULATED;
  m.value_type = type_name(value_type);
  m.base = base == OTF2_BASE_BINARY ? 2 : 10;
  m.exponent = exponent;
  c.defs->metric_members.push_back(std::move(m));
  c.pending.push_back([&c, i, name, description, unit] {
    auto& m = c.defs->metric_members[i];
    m.name = resolve(c, name, "metric member");
    m.description = resolve(c, description, "metric member");
    m.unit = resolve(c, unit, "metric member");
  });
  return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode on_metric_class(void* ud, OTF2_MetricRef self, uint8_t n, const OTF2_MetricMemberRef* members,
                                  OTF2_MetricOccurrence occurrence, OTF2_RecorderKind kind) {
  auto& c = ctx(ud);
  const auto i = static_cast<std::uint32_t>(c.defs->metrics.size());
  c.defs->metric_index.add(self, i);
  Metric m;
  m.id = self;
  m.occurrence = occurrence == OTF2_METRIC_SYNCHRONOUS_STRICT ? "synchronous_strict"
                 : occurrence == OTF2_METRIC_SYNCHRONOUS      ? "synchronous"
                                                              : "asynchronous";
  m.recorder_kind = kind == OTF2_RECORDER_KIND_ABSTRACT ? "abstract"
                    : kind == OTF2_RECORDER_KIND_CPU    ? "cpu"
                    : kind == OTF2_RECORDER_KIND_GPU    ? "gpu"
                                                        : "unknown";
  c.defs->metrics.push_back(std::move(m));
  std::vector<OTF2_MetricMemberRef> refs(members, members + n);
  c.pending.push_back([&c, i, refs] {
    for (auto r : refs)
      c.defs->metrics[i].members.push_back(lookup(c, c.defs->member_index, r, OTF2_UNDEFINED_METRIC_MEMBER, "metric member"));
  });
  return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode on_metric_instance(void* ud, OTF2_MetricRef self, OTF2_MetricRef cls, OTF2_LocationRef recorder,
                                     OTF2_MetricScope scope, uint64_t scope_ref) {
  auto& c = ctx(ud);
  const auto i = static_cast<std::uint32_t>(c.defs->metrics.size());
  c.defs->metric_index.add(self, i);
  Metric m;
  m.id = self;
  m.instance = true;
  m.occurrence = "asynchronous";
  m.recorder = recorder;
  m.scope = scope == OTF2_SCOPE_LOCATION           ? "location"
            : scope == OTF2_SCOPE_LOCATION_GROUP   ? "location_group"
            : scope == OTF2_SCOPE_SYSTEM_TREE_NODE ? "system_tree_node"
            : scope == OTF2_SCOPE_GROUP            ? "group"
                                                   : std::to_string(int(scope));
  m.scope_ref = scope_ref;
  c.defs->metrics.push_back(std::move(m));
  c.pending.push_back([&c, i, cls] {
    auto& m = c.defs->metrics[i];
    m.metric_class = lookup(c, c.defs->metric_index, cls, OTF2_UNDEFINED_METRIC, "metric class");
    if (m.metric_class != kNone) {
      m.members = c.defs->metrics[m.metric_class].members;
      m.recorder_kind = c.defs->metrics[m.metric_class].recorder_kind;
    }
  });
  return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode on_attribute(void* ud, OTF2_AttributeRef self, OTF2_StringRef name, OTF2_StringRef description,
                               OTF2_Type type) {
  auto& c = ctx(ud);
  const auto i = static_cast<std::uint32_t>(c.defs->attributes.size());
  c.defs->attribute_index.add(self, i);
  c.defs->attributes.push_back({self, {}, {}, type_name(type)});
  c.pending.push_back([&c, i, name, description] {
    c.defs->attributes[i].name = resolve(c, name, "attribute");
    c.defs->attributes[i].description = resolve(c, description, "attribute");
  });
  return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode on_parameter(void* ud, OTF2_ParameterRef self, OTF2_StringRef name, OTF2_ParameterType type) {
  auto& c = ctx(ud);
  const auto i = static_cast<std::uint32_t>(c.defs->parameters.size());
  c.defs->parameter_index.add(self, i);
  c.defs->parameters.push_back({self, {},
                                type == OTF2_PARAMETER_TYPE_STRING  ? "string"
                                : type == OTF2_PARAMETER_TYPE_INT64 ? "int64"
                                                                    : "uint64"});
  c.pending.push_back([&c, i, name] { c.defs->parameters[i].name = resolve(c, name, "parameter"); });
  return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode on_rma_window(void* ud, OTF2_RmaWinRef, OTF2_StringRef, OTF2_CommRef, OTF2_RmaWinFlag) {
  ++ctx(ud).defs->rma_windows;
  return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode on_calling_context(void* ud, OTF2_CallingContextRef self, OTF2_RegionRef region,
                                     OTF2_SourceCodeLocationRef, OTF2_CallingContextRef parent) {
  auto& c = ctx(ud);
  const auto i = static_cast<std::uint32_t>(c.defs->calling_contexts.size());
  c.defs->context_index.add(self, i);
  c.defs->calling_contexts.push_back({self, kNone, kNone});
  c.pending.push_back([&c, i, region, parent] {
    auto& cc = c.defs->calling_contexts[i];
    cc.region = lookup(c, c.defs->region_index, region, OTF2_UNDEFINED_REGION, "region");
    cc.parent = lookup(c, c.defs->context_index, parent, OTF2_UNDEFINED_CALLING_CONTEXT, "calling context");
  });
  return OTF2_CALLBACK_SUCCESS;
}

void finish_definitions(DefContext& c) {
  for (auto& f : c.pending) f();
  auto& d = *c.defs;
  for (auto& [node, name, type, value] : c.properties) {
    const auto i = lookup(c, d.node_index, node, OTF2_UNDEFINED_SYSTEM_TREE_NODE, "system tree node");
    if (i == kNone) continue;
    std::string text;
    if (type == OTF2_TYPE_STRING) text = resolve(c, value.stringRef, "property");
    else if (type == OTF2_TYPE_INT64) text = std::to_string(value.int64);
    else if (type == OTF2_TYPE_UINT64) text = std::to_string(value.uint64);
    else if (type == OTF2_TYPE_DOUBLE) text = std::to_string(value.float64);
    else text = std::to_string(value.uint64);
    d.system_tree_nodes[i].properties.emplace_back(resolve(c, name, "property"), text);
  }
  for (auto [node, domain] : c.domains) {
    const auto i = lookup(c, d.node_index, node, OTF2_UNDEFINED_SYSTEM_TREE_NODE, "system tree node");
    if (i == kNone) continue;
    d.system_tree_nodes[i].domains.push_back(domain < std::size(kDomains) ? kDomains[domain]
                                                                          : "domain" + std::to_string(domain));
  }
}

// ---- events ----------------------------------------------------------------------------

struct EvtContext {
  const Definitions* defs;
  EventSink* sink;
  std::uint32_t location = kNone;
  Event event;
  std::exception_ptr error;
  std::string problem;  // an undefined reference, a region that does not nest, with the event's position
  // (region, enter time) of the regions open on the location being read, in its current task
  // (see nests(); the other tasks' are in task_regions).
  using Stack = std::vector<std::pair<std::uint32_t, std::uint64_t>>;
  Stack open_regions;
  // Whether a record of a type libotf2 does not know is damage (the trace's OTF2 version is not
  // newer than the library's) rather than an event type added since (then skipped, as OTF2 does).
  bool unknown_is_damage = true;
  // The program region PROGRAM_BEGIN opened on this location and has not closed (kNone: none),
  // and the last program name looked up with its region (one lookup per trace, not per process).
  std::uint32_t open_program = kNone;
  std::string program_name;
  std::uint32_t program_name_region = kNone;
  // The location's current task and the stacks of its other tasks that have begun and not
  // completed, by task_key (0: the implicit task).
  std::uint64_t current_task = 0;
  std::unordered_map<std::uint64_t, Stack> task_regions{};
  // Calling contexts (Score-P's unwinding): per context its depth (1: a root; 0: a parent
  // chain that loops or breaks), and the contexts of the frames the location's calling-context
  // events opened, outermost first.
  std::vector<std::uint32_t> context_depth{};
  std::vector<std::uint32_t> open_contexts{}, chain{};
  bool context_frames_wanted = false;  // the sink's replayed_frames()
  std::uint32_t forks_open = 0;  // the location's forks not joined yet (it masters a team)
  std::uint64_t context_frames_made = 0;  // on this location (a hostile chain must not make it quadratic)
  // MEASUREMENT_ON_OFF and BUFFER_FLUSH as visits of the trace's artificial regions "MEASUREMENT
  // OFF" and "TRACE BUFFER FLUSH", as Score-P's profile and Scalasca's reader make them (kNone:
  // the trace does not define the region, or the sink wants the events as recorded only).
  // OTF2 records a flush before the event whose write started it, with that event's time T;
  // Score-P and Scalasca put the visit there and let the following events go back in time.
  // Here the visit [T, stop] is made whole just before the first later event (ending there if
  // that is before its stop) or at the location's end: times stay in order, and the visit
  // nests where the location is after its events at T. No visit stays open across events.
  std::uint32_t pausing_region = kNone, flushing_region = kNone;
  // The OMPT_PARALLEL_REGION_ID attribute's OTF2 reference (none: the trace defines no such
  // attribute; Enter events then look at no attribute list).
  std::optional<OTF2_AttributeRef> parallel_region_attribute;
  bool paused = false;      // a MEASUREMENT OFF visit is open
  bool flush_due = false;   // a flush's visit is still to be made
  std::uint64_t flush_start = 0, flush_stop = 0;

  Event& start(EventType type, OTF2_TimeStamp time, uint64_t position) {
    event = Event{};
    event.type = type;
    event.location = location;
    event.time = time;
    event.position = position;
    return event;
  }
  std::uint32_t ref(const IdIndex& index, std::uint64_t id, std::uint64_t undefined, const char* what) {
    if (id == undefined) return kNone;
    const auto i = index.find(id);
    if (i == kNone && problem.empty())
      problem = "event " + std::to_string(event.position) + " (" + std::string(event_type_name(event.type)) +
                ") refers to undefined " + what + " " + std::to_string(id);
    return i;
  }
  // References only for information (communicators, teams): tolerated when undefined, as in
  // OTF2's own integrity trace, which sends on a communicator it never defines.
  std::uint32_t soft(const IdIndex& index, std::uint64_t id, std::uint64_t undefined) const {
    return id == undefined ? kNone : index.find(id);
  }
  // Enter and Leave must nest on each location, each Leave closing the region entered last,
  // not before its Enter. A damaged record (a flipped byte in a region reference, a time or a
  // record type) breaks this where other checks cannot see it, so every reader of events
  // (events(), counts, timelines, the trace -> profile kernel) is refused it here, in one place.
  // Regions still open at the end are tolerated: a run that crashed leaves them (the profile
  // closes them at the last event, as Score-P does).
  // With OpenMP tasks, per task: Score-P writes a task's Enter and Leave events on the call
  // stack of the task current at the time (events.hpp task_key), so an untied task's regions
  // need not nest with those of the task it interrupted. A task resumed on another location
  // than the one it began on is refused (its regions' Enter are in another stream).
  bool nests() {
    if (event.type == EventType::ProgramBegin && event.region != kNone) {
      open_regions.emplace_back(event.region, event.time);
    } else if (event.type == EventType::ProgramEnd && event.region != kNone) {
      if (event.time < open_regions.back().second) problem = "PROGRAM_END before its PROGRAM_BEGIN";
      else open_regions.pop_back();
    } else if (event.type == EventType::Enter) {
      if (event.region == kNone) problem = "Enter of no region";
      else open_regions.emplace_back(event.region, event.time);
    } else if (event.type == EventType::Leave) {
      if (open_regions.empty())
        problem = "Leave of " + region_name(event.region) +
                  (current_task == 0 ? std::string(" outside every region")
                                     : " in a task with no region open on this location (its Enter is missing, or "
                                       "an untied task resumed on another thread: not supported)");
      else if (open_regions.back().first != event.region)
        problem = "Leave of " + region_name(event.region) + " inside " + region_name(open_regions.back().first);
      else if (event.time < open_regions.back().second)
        problem = "Leave of " + region_name(event.region) + " before its Enter";
      else open_regions.pop_back();
    } else if (event.type == EventType::ThreadFork || event.type == EventType::OmpFork) {
      ++forks_open;
    } else if (event.type == EventType::ThreadJoin || event.type == EventType::OmpJoin) {
      if (forks_open > 0) --forks_open;
    } else if (event.type == EventType::ThreadTaskSwitch || event.type == EventType::ThreadTaskComplete) {
      switch_task(task_after(event, current_task));
      if (event.type == EventType::ThreadTaskComplete && task_key(event) != 0) task_regions.erase(task_key(event));
    }
    return problem.empty();
  }
  void switch_task(std::uint64_t key) {
    if (key == current_task) return;
    auto& saved = task_regions[current_task];
    saved.swap(open_regions);
    if (saved.empty() && current_task != 0) task_regions.erase(current_task);
    open_regions.clear();
    if (auto it = task_regions.find(key); it != task_regions.end()) {
      open_regions.swap(it->second);
      task_regions.erase(it);
    }
    current_task = key;
  }
  void begin_location() {
    open_regions.clear();
    task_regions.clear();
    current_task = 0;
    open_contexts.clear();
    context_frames_made = 0;
    forks_open = 0;
    paused = false;
    flush_due = false;
  }
  // Depth of every calling context, once per read (a hostile parent chain must not loop).
  void measure_contexts() {
    constexpr std::uint32_t kUnknown = ~0u, kOnPath = ~1u, kBroken = ~2u;
    const auto& cc = defs->calling_contexts;
    context_depth.assign(cc.size(), kUnknown);
    std::vector<std::uint32_t> path;
    for (std::uint32_t i = 0; i < cc.size(); ++i) {
      if (context_depth[i] != kUnknown) continue;
      // Up to a root's parent (kNone), a context measured before, or one on this path (a loop).
      path.clear();
      auto at = i;
      while (at < cc.size() && context_depth[at] == kUnknown) {
        context_depth[at] = kOnPath;
        path.push_back(at);
        at = cc[at].parent;
      }
      std::uint32_t depth = at >= cc.size() ? 0 : context_depth[at] == kOnPath ? kBroken : context_depth[at];
      for (auto it = path.rbegin(); it != path.rend(); ++it) context_depth[*it] = depth = depth == kBroken ? kBroken : depth + 1;
    }
    for (auto& d : context_depth)
      if (d == kBroken) d = 0;
  }
  // The Enter and Leave events of a calling-context event (EventSink::replayed_frames):
  // an Enter or Sample of context c at unwind distance d keeps the outermost n - d + 1 open
  // frames (n: c's depth; the innermost kept is the same activation at another address), closes
  // the others and opens the rest of c's chain; a Leave closes the frames inside c's, then c's.
  // The work is the frames closed and opened, each Leave checked against the region it closes.
  OTF2_CallbackCode context_frames(EventType type, std::uint32_t context, std::uint64_t unwind) {
    if (!problem.empty()) return OTF2_CALLBACK_INTERRUPT;
    if (context == kNone) return OTF2_CALLBACK_SUCCESS;  // OTF2's undefined context: no frames
    const auto& cc = defs->calling_contexts;
    const auto n = context_depth[context];
    const auto time = event.time, position = event.position;
    const auto fail = [&](const std::string& what) {
      problem = "event " + std::to_string(position) + ": calling context " + std::to_string(cc[context].id) + " " + what;
      return OTF2_CALLBACK_INTERRUPT;
    };
    if (n == 0) return fail("has a parent chain that loops");
    // Frames kept: a Leave's context itself (closed below), else n - d + 1 of them (0 to n).
    const std::size_t keep = type == EventType::CallingContextLeave ? n
                             : unwind > std::uint64_t(n) + 1   ? 0
                                                               : std::min<std::size_t>(n, n + 1 - unwind);
    if (open_contexts.size() < keep)
      return fail("keeps " + std::to_string(keep) + " frames of " + std::to_string(open_contexts.size()) + " open");
    // Score-P's rule costs up to twice the depth per event; bounded per location by its events.
    context_frames_made += (open_contexts.size() - keep) + (n - keep);
    if (context_frames_made > (std::uint64_t(1) << 24) + 1024 * position)
      return fail("makes more than 1024 frames per event (calling contexts too deep)");
    // The chain from the kept frames down to `context`; `at` then the innermost kept context.
    chain.resize(n);
    auto at = context;
    for (auto k = n; k-- > keep; at = cc[at].parent) chain[k] = at;
    const auto frame = [&](EventType t, std::uint32_t c) {
      if (cc[c].region == kNone) return fail("has no region in its chain");
      start(t, time, position).region = cc[c].region;
      return emit();
    };
    while (open_contexts.size() > keep) {
      if (frame(EventType::Leave, open_contexts.back()) != OTF2_CALLBACK_SUCCESS) return OTF2_CALLBACK_INTERRUPT;
      open_contexts.pop_back();
    }
    if (keep > 0 && cc[open_contexts[keep - 1]].region != cc[at].region)
      return fail("does not match the region of the frame open at its depth");
    if (type == EventType::CallingContextLeave) {
      if (frame(EventType::Leave, open_contexts.back()) != OTF2_CALLBACK_SUCCESS) return OTF2_CALLBACK_INTERRUPT;
      open_contexts.pop_back();
      return OTF2_CALLBACK_SUCCESS;
    }
    if (keep > 0) open_contexts[keep - 1] = at;  // the same activation, its new address
    for (auto k = keep; k < n; ++k) {
      if (frame(EventType::Enter, chain[k]) != OTF2_CALLBACK_SUCCESS) return OTF2_CALLBACK_INTERRUPT;
      open_contexts.push_back(chain[k]);
    }
    return OTF2_CALLBACK_SUCCESS;
  }
  // Score-P closes the frames calling contexts left open when a worker ends its team, a thread
  // ends, or the program ends (a sample the trace does not record): the Leaves at `time`.
  OTF2_CallbackCode close_contexts(OTF2_TimeStamp time, std::uint64_t position) {
    if (!context_frames_wanted) return OTF2_CALLBACK_SUCCESS;
    while (!open_contexts.empty()) {
      const auto region = defs->calling_contexts[open_contexts.back()].region;
      open_contexts.pop_back();
      if (region == kNone) continue;
      start(EventType::Leave, time, position).region = region;
      if (emit() != OTF2_CALLBACK_SUCCESS) return OTF2_CALLBACK_INTERRUPT;
    }
    return OTF2_CALLBACK_SUCCESS;
  }
  std::string region_name(std::uint32_t r) const {
    return r < defs->regions.size() ? "\"" + defs->regions[r].name + "\"" : std::string("an undefined region");
  }
  OTF2_CallbackCode emit() {
    if (flush_due && event.time > flush_start) [[unlikely]]
      if (flush_visit(event.time) != OTF2_CALLBACK_SUCCESS) return OTF2_CALLBACK_INTERRUPT;
    return deliver();
  }
  OTF2_CallbackCode deliver() {
    if (!problem.empty() || !nests()) return OTF2_CALLBACK_INTERRUPT;
    try {
      sink->event(event);
    } catch (...) {
      error = std::current_exception();
      return OTF2_CALLBACK_INTERRUPT;
    }
    return OTF2_CALLBACK_SUCCESS;
  }
  // An Enter or Leave the trace does not record (a replayed visit), at the current event's
  // position; the current event is kept. Off the hot path (it copies the event).
  [[gnu::noinline, gnu::cold]] OTF2_CallbackCode made_up(EventType type, std::uint32_t region, std::uint64_t time) {
    const Event recorded = event;
    start(type, time, recorded.position).region = region;
    const auto rc = deliver();
    event = recorded;
    return rc;
  }
  // The due flush's visit, ending at `until` if that is before its stop. A visit that would be
  // the only frame of an explicit task (a flush just before a switch to a new task) would be
  // taken for the task's region: such a flush is left as its event.
  [[gnu::noinline, gnu::cold]] OTF2_CallbackCode flush_visit(std::uint64_t until) {
    flush_due = false;
    if (open_regions.empty() && current_task != 0) return OTF2_CALLBACK_SUCCESS;
    if (made_up(EventType::Enter, flushing_region, flush_start) != OTF2_CALLBACK_SUCCESS)
      return OTF2_CALLBACK_INTERRUPT;
    return made_up(EventType::Leave, flushing_region, std::min(flush_stop, until));
  }
  void buffer_flush(std::uint64_t start_time, std::uint64_t stop_time) {
    if (flushing_region == kNone) return;
    if (flush_due) {  // another flush at the same time: one visit to the later stop
      flush_stop = std::max(flush_stop, stop_time);
      return;
    }
    flush_due = true;
    flush_start = start_time;
    flush_stop = std::max(start_time, stop_time);
  }
  OTF2_CallbackCode measurement(bool on) {
    if (pausing_region == kNone || on != paused) return OTF2_CALLBACK_SUCCESS;  // OFF twice, ON without OFF
    paused = !on;
    return made_up(on ? EventType::Leave : EventType::Enter, pausing_region, event.time);
  }
  // The end of the location's events: a flush's visit still due ends at its stop.
  OTF2_CallbackCode end_location() { return flush_due ? flush_visit(flush_stop) : OTF2_CALLBACK_SUCCESS; }
};

EvtContext& ectx(void* ud) { return *static_cast<EvtContext*>(ud); }

// Every event kind without a handler of its own: type, time and position only. The template
// takes the callback's trailing parameters from the setter's signature.
template <EventType T, typename Callback>
struct Plain;
template <EventType T, typename... Rest>
struct Plain<T, OTF2_CallbackCode (*)(OTF2_LocationRef, OTF2_TimeStamp, uint64_t, void*, OTF2_AttributeList*, Rest...)> {
  static OTF2_CallbackCode fn(OTF2_LocationRef, OTF2_TimeStamp time, uint64_t position, void* ud,
                              OTF2_AttributeList*, Rest...) {
    auto& c = ectx(ud);
    c.start(T, time, position);
    return c.emit();
  }
};
template <EventType T, typename Callback>
void set_plain(OTF2_ErrorCode (*setter)(OTF2_EvtReaderCallbacks*, Callback), OTF2_EvtReaderCallbacks* cbs) {
  setter(cbs, &Plain<T, Callback>::fn);
}

// The limit a reader can reach: callbacks that do nothing (benchmarks compare with it).
template <typename Callback>
struct Empty;
template <typename... Args>
struct Empty<OTF2_CallbackCode (*)(Args...)> {
  static OTF2_CallbackCode fn(Args...) { return OTF2_CALLBACK_SUCCESS; }
};
template <typename Callback>
void set_empty(OTF2_ErrorCode (*setter)(OTF2_EvtReaderCallbacks*, Callback), OTF2_EvtReaderCallbacks* cbs) {
  setter(cbs, &Empty<Callback>::fn);
}

#define CUBESCALE_EVT_HEAD(Type)                                                                    \
  auto& c = ectx(ud);                                                                               \
  auto& e = c.start(EventType::Type, time, position);                                              \
  (void)e;                                                                                          \
  (void)attributes
#define CUBESCALE_EVT_ARGS OTF2_LocationRef, OTF2_TimeStamp time, uint64_t position, void *ud, OTF2_AttributeList *attributes

OTF2_CallbackCode ev_enter(CUBESCALE_EVT_ARGS, OTF2_RegionRef region) {
  CUBESCALE_EVT_HEAD(Enter);
  e.region = c.ref(c.defs->region_index, region, OTF2_UNDEFINED_REGION, "region");
  if (c.parallel_region_attribute && attributes) {
    std::uint64_t id = 0;  // (absent, or of another type: none)
    if (OTF2_AttributeList_GetUint64(attributes, *c.parallel_region_attribute, &id) == OTF2_SUCCESS) e.parallel_region = id;
  }
  return c.emit();
}
OTF2_CallbackCode ev_leave(CUBESCALE_EVT_ARGS, OTF2_RegionRef region) {
  CUBESCALE_EVT_HEAD(Leave);
  e.region = c.ref(c.defs->region_index, region, OTF2_UNDEFINED_REGION, "region");
  return c.emit();
}

// Score-P 7 and later: PROGRAM_BEGIN and PROGRAM_END open and close the program's region (see
// program_region in events.hpp), as Score-P's profile and Scalasca's trace reader take them.
OTF2_CallbackCode ev_program_begin(CUBESCALE_EVT_ARGS, OTF2_StringRef name, uint32_t argument_count,
                                   const OTF2_StringRef* arguments) {
  CUBESCALE_EVT_HEAD(ProgramBegin);
  const auto text = [&](OTF2_StringRef ref) {
    const auto i = c.defs->string_index.find(ref);
    return i == kNone ? std::string() : c.defs->strings[i];
  };
  std::string command = text(name);
  for (uint32_t a = 0; a < argument_count; ++a) command += ' ' + text(arguments[a]);
  if (command != c.program_name || c.program_name_region == kNone) {
    c.program_name = command;
    c.program_name_region = program_region(*c.defs, text(name), command);
  }
  // The program's region only as the location's outermost one (as Score-P writes it): a
  // PROGRAM_BEGIN inside an open region, or a second one, stays a plain event.
  if (c.open_regions.empty() && c.open_program == kNone) {
    e.region = c.program_name_region;
    c.open_program = e.region;
  }
  return c.emit();
}
// Closes the program region only where it is the innermost open one; otherwise (regions left
// open, which Score-P does not write) it stays open to the location's end, as any unclosed region.
OTF2_CallbackCode ev_program_end(CUBESCALE_EVT_ARGS, int64_t) {
  if (ectx(ud).close_contexts(time, position) != OTF2_CALLBACK_SUCCESS) return OTF2_CALLBACK_INTERRUPT;
  CUBESCALE_EVT_HEAD(ProgramEnd);
  if (c.open_program != kNone && !c.open_regions.empty() && c.open_regions.back().first == c.open_program) {
    e.region = c.open_program;
    c.open_program = kNone;
  }
  return c.emit();
}

OTF2_CallbackCode ev_buffer_flush(CUBESCALE_EVT_ARGS, OTF2_TimeStamp stop) {
  CUBESCALE_EVT_HEAD(BufferFlush);
  if (c.emit() != OTF2_CALLBACK_SUCCESS) return OTF2_CALLBACK_INTERRUPT;
  c.buffer_flush(time, stop);
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode ev_measurement(CUBESCALE_EVT_ARGS, OTF2_MeasurementMode mode) {
  CUBESCALE_EVT_HEAD(MeasurementOnOff);
  if (c.emit() != OTF2_CALLBACK_SUCCESS) return OTF2_CALLBACK_INTERRUPT;
  return c.measurement(mode == OTF2_MEASUREMENT_ON);
}

OTF2_CallbackCode p2p(EvtContext& c, Event& e, uint32_t peer, OTF2_CommRef comm, uint32_t tag, uint64_t bytes,
                      uint64_t request) {
  e.partner = peer;
  e.communicator = c.soft(c.defs->communicator_index, comm, OTF2_UNDEFINED_COMM);
  e.tag = tag;
  e.bytes = bytes;
  e.request = request;
  return c.emit();
}
OTF2_CallbackCode ev_send(CUBESCALE_EVT_ARGS, uint32_t peer, OTF2_CommRef comm, uint32_t tag, uint64_t bytes) {
  CUBESCALE_EVT_HEAD(MpiSend);
  return p2p(c, e, peer, comm, tag, bytes, 0);
}
OTF2_CallbackCode ev_isend(CUBESCALE_EVT_ARGS, uint32_t peer, OTF2_CommRef comm, uint32_t tag, uint64_t bytes,
                           uint64_t request) {
  CUBESCALE_EVT_HEAD(MpiIsend);
  return p2p(c, e, peer, comm, tag, bytes, request);
}
OTF2_CallbackCode ev_recv(CUBESCALE_EVT_ARGS, uint32_t peer, OTF2_CommRef comm, uint32_t tag, uint64_t bytes) {
  CUBESCALE_EVT_HEAD(MpiRecv);
  return p2p(c, e, peer, comm, tag, bytes, 0);
}
OTF2_CallbackCode ev_irecv(CUBESCALE_EVT_ARGS, uint32_t peer, OTF2_CommRef comm, uint32_t tag, uint64_t bytes,
                           uint64_t request) {
  CUBESCALE_EVT_HEAD(MpiIrecv);
  return p2p(c, e, peer, comm, tag, bytes, request);
}
template <EventType T>
OTF2_CallbackCode ev_request(CUBESCALE_EVT_ARGS, uint64_t request) {
  auto& c = ectx(ud);
  (void)attributes;
  c.start(T, time, position).request = request;
  return c.emit();
}
OTF2_CallbackCode ev_coll_end(CUBESCALE_EVT_ARGS, OTF2_CollectiveOp op, OTF2_CommRef comm, uint32_t root,
                              uint64_t sent, uint64_t received) {
  CUBESCALE_EVT_HEAD(MpiCollectiveEnd);
  e.tag = op;
  e.communicator = c.soft(c.defs->communicator_index, comm, OTF2_UNDEFINED_COMM);
  e.partner = root;
  e.bytes = sent;
  e.bytes_received = received;
  return c.emit();
}
// MPI-3 non-blocking collectives as Score-P records them: the request in the MPI_I<op> call,
// the completion (with operation, communicator, root and bytes) in the MPI_Wait*/Test*.
OTF2_CallbackCode ev_nbc_complete(CUBESCALE_EVT_ARGS, OTF2_CollectiveOp op, OTF2_CommRef comm, uint32_t root,
                                  uint64_t sent, uint64_t received, uint64_t request) {
  CUBESCALE_EVT_HEAD(NonBlockingCollectiveComplete);
  e.tag = op;
  e.communicator = c.soft(c.defs->communicator_index, comm, OTF2_UNDEFINED_COMM);
  e.partner = root;
  e.bytes = sent;
  e.bytes_received = received;
  e.request = request;
  return c.emit();
}
OTF2_CallbackCode ev_metric(CUBESCALE_EVT_ARGS, OTF2_MetricRef metric, uint8_t n, const OTF2_Type* types,
                            const OTF2_MetricValue* values) {
  CUBESCALE_EVT_HEAD(Metric);
  e.metric = c.ref(c.defs->metric_index, metric, OTF2_UNDEFINED_METRIC, "metric");
  e.metric_count = n;
  e.metric_types = types;
  e.metric_values = reinterpret_cast<const MetricValue*>(values);
  return c.emit();
}
OTF2_CallbackCode ev_omp_fork(CUBESCALE_EVT_ARGS, uint32_t threads) {
  CUBESCALE_EVT_HEAD(OmpFork);
  e.region = threads;
  return c.emit();
}
OTF2_CallbackCode ev_thread_fork(CUBESCALE_EVT_ARGS, OTF2_Paradigm model, uint32_t threads) {
  CUBESCALE_EVT_HEAD(ThreadFork);
  e.region = threads;
  e.tag = model;
  return c.emit();
}
OTF2_CallbackCode ev_thread_join(CUBESCALE_EVT_ARGS, OTF2_Paradigm model) {
  CUBESCALE_EVT_HEAD(ThreadJoin);
  e.tag = model;  // as the fork's
  return c.emit();
}
// COMM_CREATE / COMM_DESTROY: the communicator they name.
template <EventType T>
OTF2_CallbackCode ev_comm(CUBESCALE_EVT_ARGS, OTF2_CommRef comm) {
  auto& c = ectx(ud);
  (void)attributes;
  c.start(T, time, position).communicator = c.soft(c.defs->communicator_index, comm, OTF2_UNDEFINED_COMM);
  return c.emit();
}
// The RMA events beside the transfers, their window as the transfers have it (its OTF2 id);
// the remote rank as `partner`, a lock's id as `request`, a lock, sync or level kind as `tag`.
template <EventType T>
OTF2_CallbackCode ev_rma_window(CUBESCALE_EVT_ARGS, OTF2_RmaWinRef win) {
  auto& c = ectx(ud);
  (void)attributes;
  c.start(T, time, position).communicator = win;
  return c.emit();
}
template <EventType T>
OTF2_CallbackCode ev_rma_lock(CUBESCALE_EVT_ARGS, OTF2_RmaWinRef win, uint32_t remote, uint64_t lock,
                              OTF2_LockType type) {
  auto& c = ectx(ud);
  (void)attributes;
  auto& e = c.start(T, time, position);
  e.communicator = win;
  e.partner = remote;
  e.request = lock;
  e.tag = type;
  return c.emit();
}
OTF2_CallbackCode ev_rma_release_lock(CUBESCALE_EVT_ARGS, OTF2_RmaWinRef win, uint32_t remote, uint64_t lock) {
  CUBESCALE_EVT_HEAD(RmaReleaseLock);
  e.communicator = win;
  e.partner = remote;
  e.request = lock;
  return c.emit();
}
OTF2_CallbackCode ev_rma_sync(CUBESCALE_EVT_ARGS, OTF2_RmaWinRef win, uint32_t remote, OTF2_RmaSyncType type) {
  CUBESCALE_EVT_HEAD(RmaSync);
  e.communicator = win;
  e.partner = remote;
  e.tag = type;
  return c.emit();
}
OTF2_CallbackCode ev_rma_group_sync(CUBESCALE_EVT_ARGS, OTF2_RmaSyncLevel level, OTF2_RmaWinRef win, OTF2_GroupRef) {
  CUBESCALE_EVT_HEAD(RmaGroupSync);
  e.communicator = win;
  e.tag = level;
  return c.emit();
}
// Locks (OpenMP and thread): the lock's id as `request`, its acquisition order as `tag`, its
// paradigm (OpenMP, POSIX threads ...; lock ids are per paradigm) as `partner`.
template <EventType T>
OTF2_CallbackCode lock_event(void* ud, OTF2_TimeStamp time, uint64_t position, OTF2_Paradigm paradigm, uint32_t lock,
                             uint32_t order) {
  auto& c = ectx(ud);
  auto& e = c.start(T, time, position);
  e.request = lock;
  e.tag = order;
  e.partner = paradigm;
  return c.emit();
}
template <EventType T>
OTF2_CallbackCode ev_omp_lock(CUBESCALE_EVT_ARGS, uint32_t lock, uint32_t order) {
  (void)attributes;
  return lock_event<T>(ud, time, position, OTF2_PARADIGM_OPENMP, lock, order);
}
template <EventType T>
OTF2_CallbackCode ev_thread_lock(OTF2_LocationRef, OTF2_TimeStamp time, uint64_t position, void* ud,
                                 OTF2_AttributeList*, OTF2_Paradigm paradigm, uint32_t lock, uint32_t order) {
  return lock_event<T>(ud, time, position, paradigm, lock, order);
}
template <EventType T>
OTF2_CallbackCode ev_team(CUBESCALE_EVT_ARGS, OTF2_CommRef team) {
  auto& c = ectx(ud);
  (void)attributes;
  // (A worker's only: Score-P pauses the master of the team, whose frames go on after the join.)
  if (T == EventType::ThreadTeamEnd && c.forks_open == 0 && c.close_contexts(time, position) != OTF2_CALLBACK_SUCCESS)
    return OTF2_CALLBACK_INTERRUPT;
  auto& e = c.start(T, time, position);
  e.communicator = c.soft(c.defs->communicator_index, team, OTF2_UNDEFINED_COMM);
  return c.emit();
}
template <EventType T>
OTF2_CallbackCode ev_task(CUBESCALE_EVT_ARGS, OTF2_CommRef team, uint32_t creator, uint32_t generation) {
  auto& c = ectx(ud);
  (void)attributes;
  auto& e = c.start(T, time, position);
  e.communicator = c.soft(c.defs->communicator_index, team, OTF2_UNDEFINED_COMM);
  e.partner = creator;
  e.request = generation;
  return c.emit();
}
template <EventType T>
OTF2_CallbackCode ev_omp_task(CUBESCALE_EVT_ARGS, uint64_t task) {
  auto& c = ectx(ud);
  (void)attributes;
  c.start(T, time, position).request = task;
  return c.emit();
}
template <EventType T>
OTF2_CallbackCode ev_rma_transfer(CUBESCALE_EVT_ARGS, OTF2_RmaWinRef win, uint32_t remote, uint64_t bytes,
                                  uint64_t matching) {
  auto& c = ectx(ud);
  (void)attributes;
  auto& e = c.start(T, time, position);
  e.communicator = win;
  e.partner = remote;
  e.bytes = bytes;
  e.request = matching;
  return c.emit();
}
// The bytes an RMA collective (a window's creation, fence ...) or atomic moved: `bytes` sent,
// `bytes_received` received.
OTF2_CallbackCode ev_rma_collective_end(CUBESCALE_EVT_ARGS, OTF2_CollectiveOp op, OTF2_RmaSyncLevel, OTF2_RmaWinRef win,
                                        uint32_t root, uint64_t sent, uint64_t received) {
  CUBESCALE_EVT_HEAD(RmaCollectiveEnd);
  e.communicator = win;
  e.tag = op;
  e.partner = root;
  e.bytes = sent;
  e.bytes_received = received;
  return c.emit();
}
OTF2_CallbackCode ev_rma_atomic(CUBESCALE_EVT_ARGS, OTF2_RmaWinRef win, uint32_t remote, OTF2_RmaAtomicType,
                                uint64_t sent, uint64_t received, uint64_t matching) {
  CUBESCALE_EVT_HEAD(RmaAtomic);
  e.communicator = win;
  e.partner = remote;
  e.bytes = sent;
  e.bytes_received = received;
  e.request = matching;
  return c.emit();
}
template <EventType T>
OTF2_CallbackCode ev_rma_complete(CUBESCALE_EVT_ARGS, OTF2_RmaWinRef win, uint64_t matching) {
  auto& c = ectx(ud);
  (void)attributes;
  auto& e = c.start(T, time, position);
  e.communicator = win;
  e.request = matching;
  return c.emit();
}
// A calling-context event as recorded and, where the sink asks, the frames it closes and opens
// (EvtContext::context_frames): an Enter or Sample's after the frames, a Leave's before them.
OTF2_CallbackCode calling_context(EvtContext& c, EventType type, OTF2_TimeStamp time, uint64_t position,
                                  OTF2_CallingContextRef ref, uint64_t unwind) {
  c.start(type, time, position);  // (named in ref's message)
  const auto context = c.ref(c.defs->context_index, ref, OTF2_UNDEFINED_CALLING_CONTEXT, "calling context");
  auto recorded = [&] {
    auto& e = c.start(type, time, position);
    e.region = context;
    e.request = unwind;
    return c.emit();
  };
  if (!c.context_frames_wanted) return recorded();
  if (type == EventType::CallingContextLeave) {
    if (recorded() != OTF2_CALLBACK_SUCCESS) return OTF2_CALLBACK_INTERRUPT;
    return c.context_frames(type, context, unwind);  // (the sink saw the event, which it cannot change)
  }
  if (c.context_frames(type, context, unwind) != OTF2_CALLBACK_SUCCESS) return OTF2_CALLBACK_INTERRUPT;
  return recorded();
}
template <EventType T>
OTF2_CallbackCode ev_context(CUBESCALE_EVT_ARGS, OTF2_CallingContextRef context, uint32_t unwind) {
  (void)attributes;
  return calling_context(ectx(ud), T, time, position, context, unwind);
}
OTF2_CallbackCode ev_thread_end(CUBESCALE_EVT_ARGS, OTF2_CommRef, uint64_t) {
  auto& c = ectx(ud);
  (void)attributes;
  if (c.close_contexts(time, position) != OTF2_CALLBACK_SUCCESS) return OTF2_CALLBACK_INTERRUPT;
  c.start(EventType::ThreadEnd, time, position);
  return c.emit();
}
OTF2_CallbackCode ev_context_leave(CUBESCALE_EVT_ARGS, OTF2_CallingContextRef context) {
  (void)attributes;
  return calling_context(ectx(ud), EventType::CallingContextLeave, time, position, context, 0);
}
OTF2_CallbackCode ev_sample(CUBESCALE_EVT_ARGS, OTF2_CallingContextRef context, uint32_t unwind,
                            OTF2_InterruptGeneratorRef) {
  (void)attributes;
  return calling_context(ectx(ud), EventType::CallingContextSample, time, position, context, unwind);
}
OTF2_CallbackCode ev_param_int(CUBESCALE_EVT_ARGS, OTF2_ParameterRef parameter, int64_t value) {
  CUBESCALE_EVT_HEAD(ParameterInt);
  e.region = c.ref(c.defs->parameter_index, parameter, OTF2_UNDEFINED_PARAMETER, "parameter");
  e.request = static_cast<std::uint64_t>(value);
  return c.emit();
}
OTF2_CallbackCode ev_param_uint(CUBESCALE_EVT_ARGS, OTF2_ParameterRef parameter, uint64_t value) {
  CUBESCALE_EVT_HEAD(ParameterUnsignedInt);
  e.region = c.ref(c.defs->parameter_index, parameter, OTF2_UNDEFINED_PARAMETER, "parameter");
  e.request = value;
  return c.emit();
}
OTF2_CallbackCode ev_param_string(CUBESCALE_EVT_ARGS, OTF2_ParameterRef parameter, OTF2_StringRef value) {
  CUBESCALE_EVT_HEAD(ParameterString);
  e.region = c.ref(c.defs->parameter_index, parameter, OTF2_UNDEFINED_PARAMETER, "parameter");
  c.ref(c.defs->string_index, value, OTF2_UNDEFINED_STRING, "string");  // the profile names a call path by it
  e.request = value;
  return c.emit();
}

// A record whose type libotf2 does not know. libotf2 skips it by its length byte and reads on,
// and still counts it, so without this callback a flipped type byte silently drops one event
// (300,815 of 300,816 events of a damaged trace read "fine").
OTF2_CallbackCode ev_unknown(OTF2_LocationRef, OTF2_TimeStamp, uint64_t position, void* ud, OTF2_AttributeList*) {
  auto& c = ectx(ud);
  if (!c.unknown_is_damage) return OTF2_CALLBACK_SUCCESS;
  c.event.position = position;
  c.problem = "event " + std::to_string(position) + " is a record of a type OTF2 " + OTF2_VERSION +
              " does not know, in a trace of no newer OTF2 version: a damaged record";
  return OTF2_CALLBACK_INTERRUPT;
}

OTF2_EvtReaderCallbacks* make_callbacks() {
  auto* cbs = OTF2_EvtReaderCallbacks_New();
  OTF2_EvtReaderCallbacks_SetUnknownCallback(cbs, ev_unknown);
#define CUBESCALE_SET_PLAIN(name) set_plain<EventType::name>(&OTF2_EvtReaderCallbacks_Set##name##Callback, cbs);
  CUBESCALE_TRACE_EVENT_TYPES(CUBESCALE_SET_PLAIN)
#undef CUBESCALE_SET_PLAIN
  OTF2_EvtReaderCallbacks_SetEnterCallback(cbs, ev_enter);
  OTF2_EvtReaderCallbacks_SetProgramBeginCallback(cbs, ev_program_begin);
  OTF2_EvtReaderCallbacks_SetProgramEndCallback(cbs, ev_program_end);
  OTF2_EvtReaderCallbacks_SetBufferFlushCallback(cbs, ev_buffer_flush);
  OTF2_EvtReaderCallbacks_SetMeasurementOnOffCallback(cbs, ev_measurement);
  OTF2_EvtReaderCallbacks_SetLeaveCallback(cbs, ev_leave);
  OTF2_EvtReaderCallbacks_SetMpiSendCallback(cbs, ev_send);
  OTF2_EvtReaderCallbacks_SetMpiIsendCallback(cbs, ev_isend);
  OTF2_EvtReaderCallbacks_SetMpiRecvCallback(cbs, ev_recv);
  OTF2_EvtReaderCallbacks_SetMpiIrecvCallback(cbs, ev_irecv);
  OTF2_EvtReaderCallbacks_SetMpiIsendCompleteCallback(cbs, ev_request<EventType::MpiIsendComplete>);
  OTF2_EvtReaderCallbacks_SetMpiIrecvRequestCallback(cbs, ev_request<EventType::MpiIrecvRequest>);
  OTF2_EvtReaderCallbacks_SetMpiRequestTestCallback(cbs, ev_request<EventType::MpiRequestTest>);
  OTF2_EvtReaderCallbacks_SetMpiRequestCancelledCallback(cbs, ev_request<EventType::MpiRequestCancelled>);
  OTF2_EvtReaderCallbacks_SetMpiCollectiveEndCallback(cbs, ev_coll_end);
  OTF2_EvtReaderCallbacks_SetNonBlockingCollectiveRequestCallback(cbs,
                                                                 ev_request<EventType::NonBlockingCollectiveRequest>);
  OTF2_EvtReaderCallbacks_SetNonBlockingCollectiveCompleteCallback(cbs, ev_nbc_complete);
  OTF2_EvtReaderCallbacks_SetMetricCallback(cbs, ev_metric);
  OTF2_EvtReaderCallbacks_SetOmpForkCallback(cbs, ev_omp_fork);
  OTF2_EvtReaderCallbacks_SetOmpTaskCreateCallback(cbs, ev_omp_task<EventType::OmpTaskCreate>);
  OTF2_EvtReaderCallbacks_SetOmpTaskSwitchCallback(cbs, ev_omp_task<EventType::OmpTaskSwitch>);
  OTF2_EvtReaderCallbacks_SetOmpTaskCompleteCallback(cbs, ev_omp_task<EventType::OmpTaskComplete>);
  OTF2_EvtReaderCallbacks_SetThreadForkCallback(cbs, ev_thread_fork);
  OTF2_EvtReaderCallbacks_SetThreadJoinCallback(cbs, ev_thread_join);
  OTF2_EvtReaderCallbacks_SetCommCreateCallback(cbs, ev_comm<EventType::CommCreate>);
  OTF2_EvtReaderCallbacks_SetCommDestroyCallback(cbs, ev_comm<EventType::CommDestroy>);
  OTF2_EvtReaderCallbacks_SetRmaWinCreateCallback(cbs, ev_rma_window<EventType::RmaWinCreate>);
  OTF2_EvtReaderCallbacks_SetRmaWinDestroyCallback(cbs, ev_rma_window<EventType::RmaWinDestroy>);
  OTF2_EvtReaderCallbacks_SetRmaWaitChangeCallback(cbs, ev_rma_window<EventType::RmaWaitChange>);
  OTF2_EvtReaderCallbacks_SetRmaRequestLockCallback(cbs, ev_rma_lock<EventType::RmaRequestLock>);
  OTF2_EvtReaderCallbacks_SetRmaAcquireLockCallback(cbs, ev_rma_lock<EventType::RmaAcquireLock>);
  OTF2_EvtReaderCallbacks_SetRmaTryLockCallback(cbs, ev_rma_lock<EventType::RmaTryLock>);
  OTF2_EvtReaderCallbacks_SetRmaReleaseLockCallback(cbs, ev_rma_release_lock);
  OTF2_EvtReaderCallbacks_SetRmaSyncCallback(cbs, ev_rma_sync);
  OTF2_EvtReaderCallbacks_SetRmaGroupSyncCallback(cbs, ev_rma_group_sync);
  OTF2_EvtReaderCallbacks_SetThreadTeamBeginCallback(cbs, ev_team<EventType::ThreadTeamBegin>);
  OTF2_EvtReaderCallbacks_SetThreadAcquireLockCallback(cbs, ev_thread_lock<EventType::ThreadAcquireLock>);
  OTF2_EvtReaderCallbacks_SetThreadReleaseLockCallback(cbs, ev_thread_lock<EventType::ThreadReleaseLock>);
  OTF2_EvtReaderCallbacks_SetOmpAcquireLockCallback(cbs, ev_omp_lock<EventType::OmpAcquireLock>);
  OTF2_EvtReaderCallbacks_SetOmpReleaseLockCallback(cbs, ev_omp_lock<EventType::OmpReleaseLock>);
  OTF2_EvtReaderCallbacks_SetThreadTeamEndCallback(cbs, ev_team<EventType::ThreadTeamEnd>);
  OTF2_EvtReaderCallbacks_SetThreadTaskCreateCallback(cbs, ev_task<EventType::ThreadTaskCreate>);
  OTF2_EvtReaderCallbacks_SetThreadTaskSwitchCallback(cbs, ev_task<EventType::ThreadTaskSwitch>);
  OTF2_EvtReaderCallbacks_SetThreadTaskCompleteCallback(cbs, ev_task<EventType::ThreadTaskComplete>);
  OTF2_EvtReaderCallbacks_SetRmaPutCallback(cbs, ev_rma_transfer<EventType::RmaPut>);
  OTF2_EvtReaderCallbacks_SetRmaCollectiveEndCallback(cbs, ev_rma_collective_end);
  OTF2_EvtReaderCallbacks_SetRmaAtomicCallback(cbs, ev_rma_atomic);
  OTF2_EvtReaderCallbacks_SetRmaGetCallback(cbs, ev_rma_transfer<EventType::RmaGet>);
  OTF2_EvtReaderCallbacks_SetRmaOpCompleteBlockingCallback(cbs, ev_rma_complete<EventType::RmaOpCompleteBlocking>);
  OTF2_EvtReaderCallbacks_SetRmaOpCompleteNonBlockingCallback(cbs,
                                                              ev_rma_complete<EventType::RmaOpCompleteNonBlocking>);
  OTF2_EvtReaderCallbacks_SetRmaOpTestCallback(cbs, ev_rma_complete<EventType::RmaOpTest>);
  OTF2_EvtReaderCallbacks_SetCallingContextEnterCallback(cbs, ev_context<EventType::CallingContextEnter>);
  OTF2_EvtReaderCallbacks_SetCallingContextLeaveCallback(cbs, ev_context_leave);
  OTF2_EvtReaderCallbacks_SetCallingContextSampleCallback(cbs, ev_sample);
  OTF2_EvtReaderCallbacks_SetThreadEndCallback(cbs, ev_thread_end);
  OTF2_EvtReaderCallbacks_SetParameterIntCallback(cbs, ev_param_int);
  OTF2_EvtReaderCallbacks_SetParameterUnsignedIntCallback(cbs, ev_param_uint);
  OTF2_EvtReaderCallbacks_SetParameterStringCallback(cbs, ev_param_string);
  return cbs;
}

}  // namespace

void IdIndex::add(std::uint64_t id, std::uint32_t index) {
  constexpr std::uint64_t kDenseLimit = std::uint64_t(1) << 24;
  if (id < kDenseLimit) {
    if (id >= dense_.size()) dense_.resize(id + 1, kNone);
    dense_[id] = index;
  } else {
    sparse_[id] = index;
  }
}

std::string_view event_type_name(EventType type) {
  const auto& names = event_type_names();
  const auto i = static_cast<std::size_t>(type);
  return i < names.size() ? std::string_view(names[i]) : std::string_view("UNKNOWN");
}

ValueType value_type(std::uint8_t t) {
  switch (t) {
    case OTF2_TYPE_INT8: case OTF2_TYPE_INT16: case OTF2_TYPE_INT32: case OTF2_TYPE_INT64: return ValueType::Int64;
    case OTF2_TYPE_UINT8: case OTF2_TYPE_UINT16: case OTF2_TYPE_UINT32: case OTF2_TYPE_UINT64: return ValueType::UInt64;
    case OTF2_TYPE_FLOAT: case OTF2_TYPE_DOUBLE: return ValueType::Double;
    default: return ValueType::Other;
  }
}

double as_double(std::uint8_t t, MetricValue v) {
  switch (value_type(t)) {
    case ValueType::Int64: return static_cast<double>(v.signed_int);
    case ValueType::UInt64: return static_cast<double>(v.unsigned_int);
    case ValueType::Double: return v.floating_point;
    default: return 0.0;
  }
}

namespace {
// Reads records through `read_batch(want, &got)` (one of libotf2's Read*Definitions or
// ReadLocalEvents) until the member ends, fails, `stop()` says so, or more than `limit`
// records arrived. In batches because OTF2's reader can be sent back over its own data by a
// damaged chunk (a mutated record type, a cut file whose stale buffer is read again), and then
// delivers the same records again and again. `limit` is what the member can hold (most_records).
template <class ReadBatch, class Stop>
std::pair<OTF2_ErrorCode, std::uint64_t> read_at_most(std::uint64_t limit, std::uint64_t batch, ReadBatch read_batch,
                                                      Stop stop) {
  std::uint64_t n = 0;
  OTF2_ErrorCode rc = OTF2_SUCCESS;
  for (;;) {
    const std::uint64_t want = std::min(batch, limit - std::min(n, limit) + 1);
    std::uint64_t got = 0;
    rc = read_batch(want, &got);
    n += got;
    if (rc != OTF2_SUCCESS || got < want || n > limit || stop()) break;
  }
  return {rc, n};
}

bool never() { return false; }
}  // namespace

Trace::Trace(std::string anchor) : path_(std::move(anchor)) {
  archive_ = path_;
  if (archive_.size() > 5 && archive_.compare(archive_.size() - 5, 5, ".otf2") == 0) archive_.resize(archive_.size() - 5);
  auto reader = open_reader(path_);
  const std::string member = archive_.substr(archive_.find_last_of('/') + 1) + ".def";
  auto* gdr = OTF2_Reader_GetGlobalDefReader(reader.get());
  if (!gdr) throw FormatError(path_, member, 0, "cannot open the global definitions: " + describe(OTF2_ERROR_FILE_CAN_NOT_OPEN));
  DefContext c{&defs_, {}, {}, {}, {}, {}};
  auto* cbs = OTF2_GlobalDefReaderCallbacks_New();
  OTF2_GlobalDefReaderCallbacks_SetClockPropertiesCallback(cbs, on_clock);
  OTF2_GlobalDefReaderCallbacks_SetStringCallback(cbs, on_string);
  OTF2_GlobalDefReaderCallbacks_SetSystemTreeNodeCallback(cbs, on_node);
  OTF2_GlobalDefReaderCallbacks_SetSystemTreeNodePropertyCallback(cbs, on_node_property);
  OTF2_GlobalDefReaderCallbacks_SetSystemTreeNodeDomainCallback(cbs, on_node_domain);
  OTF2_GlobalDefReaderCallbacks_SetLocationGroupCallback(cbs, on_location_group);
  OTF2_GlobalDefReaderCallbacks_SetLocationCallback(cbs, on_location);
  OTF2_GlobalDefReaderCallbacks_SetRegionCallback(cbs, on_region);
  OTF2_GlobalDefReaderCallbacks_SetGroupCallback(cbs, on_group);
  OTF2_GlobalDefReaderCallbacks_SetCommCallback(cbs, on_comm);
#if OTF2_VERSION_MAJOR >= 3
  OTF2_GlobalDefReaderCallbacks_SetInterCommCallback(cbs, on_inter_comm);
#endif
  OTF2_GlobalDefReaderCallbacks_SetMetricMemberCallback(cbs, on_metric_member);
  OTF2_GlobalDefReaderCallbacks_SetMetricClassCallback(cbs, on_metric_class);
  OTF2_GlobalDefReaderCallbacks_SetMetricInstanceCallback(cbs, on_metric_instance);
  OTF2_GlobalDefReaderCallbacks_SetAttributeCallback(cbs, on_attribute);
  OTF2_GlobalDefReaderCallbacks_SetParameterCallback(cbs, on_parameter);
  OTF2_GlobalDefReaderCallbacks_SetCallingContextCallback(cbs, on_calling_context);
  OTF2_GlobalDefReaderCallbacks_SetRmaWinCallback(cbs, on_rma_window);
  auto rc = OTF2_Reader_RegisterGlobalDefCallbacks(reader.get(), gdr, cbs, &c);
  OTF2_GlobalDefReaderCallbacks_Delete(cbs);
  if (rc != OTF2_SUCCESS) throw FormatError(path_, member, 0, describe(rc));
  check_anchor_ends(reader.get(), path_);
  std::uint8_t major = 0, minor = 0, bugfix = 0;
  newer_writer_ = OTF2_Reader_GetVersion(reader.get(), &major, &minor, &bugfix) == OTF2_SUCCESS &&
                  (major > OTF2_VERSION_MAJOR || (major == OTF2_VERSION_MAJOR && minor > OTF2_VERSION_MINOR));
  OTF2_Compression compression = OTF2_COMPRESSION_NONE;
  compressed_ = OTF2_Reader_GetCompression(reader.get(), &compression) == OTF2_SUCCESS &&
                compression == OTF2_COMPRESSION_ZLIB;
  const auto limit = most_records(member);
  const auto [rc_read, read] = read_at_most(
      limit, kRecordBatch,
      [&](std::uint64_t want, std::uint64_t* got) {
        return OTF2_Reader_ReadGlobalDefinitions(reader.get(), gdr, want, got);
      },
      never);
  if (rc_read != OTF2_SUCCESS)
    throw FormatError(path_, member, read, "definition " + std::to_string(read) + ": " + describe(rc_read));
  if (read > limit)
    throw FormatError(path_, member, read,
                      "more than " + std::to_string(limit) + " definitions (more than the file can hold): corrupt records");
  finish_definitions(c);
  if (!c.error.empty()) throw FormatError(path_, member, 0, c.error);
  // Definitions cut at a record boundary read without an error from libotf2; the anchor's
  // count of locations tells.
  uint64_t announced = 0;
  if (OTF2_Reader_GetNumberOfLocations(reader.get(), &announced) == OTF2_SUCCESS && defs_.locations.size() < announced)
    throw FormatError(path_, member, read,
                      "the anchor announces " + std::to_string(announced) + " locations, the definitions define " +
                          std::to_string(defs_.locations.size()) + " (truncated?)");
}

std::vector<std::uint32_t> Trace::all_locations() const {
  std::vector<std::uint32_t> out(defs_.locations.size());
  for (std::uint32_t i = 0; i < out.size(); ++i) out[i] = i;
  return out;
}

std::string Trace::event_member(std::uint32_t location) const {
  const auto base = archive_.substr(archive_.find_last_of('/') + 1);
  return base + "/" + std::to_string(defs_.locations.at(location).id) + ".evt";
}

std::uint64_t Trace::most_records(const std::string& member) const {
  // The POSIX substrate's file; other substrates (SIONlib) keep no file per location.
  constexpr std::uint64_t kUnknown = std::numeric_limits<std::uint64_t>::max() - 1;
  constexpr std::uint64_t kZlibLargestRatio = 1032;
  std::error_code ec;
  const auto dir = std::filesystem::path(path_).parent_path();
  const std::uint64_t bytes = std::filesystem::file_size(dir / member, ec);
  if (ec) return kUnknown;
  if (!compressed_) return bytes;
  return bytes > kUnknown / kZlibLargestRatio ? kUnknown : bytes * kZlibLargestRatio;
}

std::uint64_t Trace::announced_events(std::uint32_t location) const {
  const auto announced = defs_.locations.at(location).events;
  if (announced == 0) return 0;
  const auto member = event_member(location);
  const auto most = most_records(member);
  if (announced > most)
    throw FormatError(path_, member, 0,
                      "the definitions announce " + std::to_string(announced) + " events, the file can hold at most " +
                          std::to_string(most));
  return announced;
}

namespace {
// The artificial region Score-P defines for a measurement event (Scalasca's reader looks it up
// by name as well), kNone where the trace has none.
std::uint32_t measurement_region(const Definitions& defs, std::string_view name) {
  for (std::uint32_t r = 0; r < defs.regions.size(); ++r)
    if (defs.regions[r].name == name && defs.regions[r].role == "artificial") return r;
  return kNone;
}
}  // namespace

namespace {
// Why a location's event file cannot be opened, as far as the file tells (libotf2 says "Unable
// to open file" for a missing, an empty and an unreadable one alike); empty where it does not.
// A run that crashed, or a copy of the trace left incomplete, leaves such files.
std::string unopenable_events(const std::filesystem::path& file) {
  std::error_code ec;
  const auto status = std::filesystem::status(file, ec);
  if (status.type() == std::filesystem::file_type::not_found) return "the file is missing";
  if (status.type() == std::filesystem::file_type::directory) return "a directory, not a file";
  if (std::filesystem::is_regular_file(status) && std::filesystem::file_size(file, ec) == 0 && !ec)
    return "the file is empty (0 bytes)";
  std::FILE* f = std::fopen(file.c_str(), "rb");
  if (!f) return std::generic_category().message(errno);  // (strerror is not thread-safe: parts read at once)
  std::fclose(f);
  return "";
}
}  // namespace

void Trace::read(const std::vector<std::uint32_t>& locations, EventSink& sink) const {
  std::unique_ptr<OTF2_EvtReaderCallbacks, decltype(&OTF2_EvtReaderCallbacks_Delete)> cbs(make_callbacks(),
                                                                                           OTF2_EvtReaderCallbacks_Delete);
  EvtContext c{&defs_, &sink, kNone, {}, nullptr, {}, {}, !newer_writer_};
  c.context_frames_wanted = sink.replayed_frames() && !defs_.calling_contexts.empty();
  if (c.context_frames_wanted) c.measure_contexts();
  if (sink.replayed_frames()) {
    c.pausing_region = measurement_region(defs_, "MEASUREMENT OFF");
    c.flushing_region = measurement_region(defs_, "TRACE BUFFER FLUSH");
  }
  for (const auto& a : defs_.attributes)
    if (a.name == "OMPT_PARALLEL_REGION_ID" && a.type == "uint64") c.parallel_region_attribute = a.id;
  stream(locations, cbs.get(), &c);
}

std::uint64_t Trace::read_with_empty_callbacks(const std::vector<std::uint32_t>& locations) const {
  std::unique_ptr<OTF2_EvtReaderCallbacks, decltype(&OTF2_EvtReaderCallbacks_Delete)> cbs(
      OTF2_EvtReaderCallbacks_New(), OTF2_EvtReaderCallbacks_Delete);
#define CUBESCALE_SET_EMPTY(name) set_empty(&OTF2_EvtReaderCallbacks_Set##name##Callback, cbs.get());
  CUBESCALE_TRACE_EVENT_TYPES(CUBESCALE_SET_EMPTY)
#undef CUBESCALE_SET_EMPTY
  return stream(locations, cbs.get(), nullptr);
}

std::uint64_t Trace::stream(const std::vector<std::uint32_t>& locations, void* callbacks, void* context) const {
  auto* c = static_cast<EvtContext*>(context);
  for (auto l : locations)
    if (l >= defs_.locations.size())
      throw std::out_of_range("location index " + std::to_string(l) + " out of range");
  if (locations.empty()) return 0;
  auto reader = open_reader(path_);
  const auto fail = [&](std::uint32_t l, std::uint64_t pos, const std::string& what) {
    return FormatError(path_, event_member(l), pos, what);
  };
  for (auto l : locations)
    if (auto rc = OTF2_Reader_SelectLocation(reader.get(), defs_.locations[l].id); rc != OTF2_SUCCESS)
      throw fail(l, 0, describe(rc));
  // Local definitions carry the mapping tables from local to global ids: read them first.
  const bool local_defs = OTF2_Reader_OpenDefFiles(reader.get()) == OTF2_SUCCESS;
  last_otf2_message.clear();
  if (local_defs) {
    for (auto l : locations) {
      auto* dr = OTF2_Reader_GetDefReader(reader.get(), defs_.locations[l].id);
      last_otf2_message.clear();
      if (!dr) continue;  // no local definitions for this location: nothing to map
      auto member = event_member(l);
      member.replace(member.size() - 4, 4, ".def");
      const auto limit = most_records(member);
      const auto [rc, n] = read_at_most(
          limit, kRecordBatch,
          [&](std::uint64_t want, std::uint64_t* got) {
            return OTF2_Reader_ReadLocalDefinitions(reader.get(), dr, want, got);
          },
          never);
      OTF2_Reader_CloseDefReader(reader.get(), dr);
      if (rc != OTF2_SUCCESS) throw FormatError(path_, member, n, "local definitions: " + describe(rc));
      if (n > limit)
        throw FormatError(path_, member, n,
                          "more than " + std::to_string(limit) + " local definitions (more than the file can hold): corrupt records");
    }
    OTF2_Reader_CloseDefFiles(reader.get());
  }
  if (auto rc = OTF2_Reader_OpenEvtFiles(reader.get()); rc != OTF2_SUCCESS) throw fail(locations[0], 0, describe(rc));
  std::uint64_t total = 0;
  for (auto l : locations) {
    auto* er = OTF2_Reader_GetEvtReader(reader.get(), defs_.locations[l].id);
    if (!er) {
      const auto why = unopenable_events(std::filesystem::path(path_).parent_path() / event_member(l));
      throw fail(l, 0, "cannot open the events: " + (why.empty() ? describe(OTF2_ERROR_FILE_CAN_NOT_OPEN) : why));
    }
    if (auto rc = OTF2_Reader_RegisterEvtCallbacks(reader.get(), er, static_cast<OTF2_EvtReaderCallbacks*>(callbacks),
                                                   context);
        rc != OTF2_SUCCESS)
      throw fail(l, 0, describe(rc));
    if (c) {
      c->location = l;
      c->begin_location();
      c->open_program = kNone;
      c->sink->begin_location(l);
    }
    // A location holds at most the events its definition announces, or what its event file
    // can hold (see read_at_most).
    const auto announced = defs_.locations[l].events;
    const std::uint64_t limit = announced != 0 ? announced : most_records(event_member(l));
    const auto [rc, n] = read_at_most(
        limit, kRecordBatch,
        [&](std::uint64_t want, std::uint64_t* got) {
          const auto rc = OTF2_Reader_ReadLocalEvents(reader.get(), er, want, got);
          events_read_.fetch_add(*got, std::memory_order_relaxed);
          return rc;
        },
        [c] { return c && (c->error || !c->problem.empty()); });
    OTF2_Reader_CloseEvtReader(reader.get(), er);
    if (c && c->error) std::rethrow_exception(c->error);
    if (c && !c->problem.empty()) throw fail(l, c->event.position, c->problem);
    if (rc != OTF2_SUCCESS) throw fail(l, n, "after " + std::to_string(n) + " events: " + describe(rc));
    if (n > limit)
      throw fail(l, n, "more than " + std::to_string(limit) + " events" +
                           (announced != 0 ? " (as the definitions announce)" : " (more than the file can hold)") +
                           ": corrupt event records");
    if (announced != 0 && n != announced)
      throw fail(l, n, "the definitions announce " + std::to_string(announced) + " events, the file holds " +
                           std::to_string(n) + " (truncated?)");
    total += n;
    if (c) {
      if (c->end_location() != OTF2_CALLBACK_SUCCESS) {
        if (c->error) std::rethrow_exception(c->error);
        throw fail(l, c->event.position, c->problem);
      }
      c->sink->end_location(l);
    }
  }
  OTF2_Reader_CloseEvtFiles(reader.get());
  return total;
}

namespace {
struct Counter final : EventSink {
  std::vector<std::vector<std::uint64_t>>* counts;
  std::vector<std::uint64_t>* visits = nullptr;
  std::size_t row = 0;
  void begin_location(std::uint32_t) override {}
  void event(const Event& e) override {
    (*counts)[row][static_cast<std::size_t>(e.type)]++;
    if (visits && (e.type == EventType::Enter || e.type == EventType::ProgramBegin) && e.region < visits->size())
      ++(*visits)[e.region];
  }
  bool replayed_frames() const override { return false; }  // the events as recorded
  void end_location(std::uint32_t) override { ++row; }
};
}  // namespace

std::vector<std::vector<std::uint64_t>> count_events(const Trace& trace, const std::vector<std::uint32_t>& locations,
                                                     std::vector<std::uint64_t>* visits) {
  std::vector<std::vector<std::uint64_t>> counts(locations.size(), std::vector<std::uint64_t>(kEventTypeCount));
  Counter counter;
  counter.counts = &counts;
  counter.visits = visits;
  trace.read(locations, counter);
  return counts;
}

std::uint32_t program_region(const Definitions& defs, const std::string& program, const std::string& command) {
  const auto slash = program.find_last_of('/');
  const std::string_view base = slash == std::string::npos ? std::string_view(program)
                                                           : std::string_view(program).substr(slash + 1);
  std::uint32_t by_name = kNone;
  for (std::uint32_t r = 0; r < defs.regions.size(); ++r) {
    const auto& region = defs.regions[r];
    if (region.role != "artificial" || region.paradigm != "measurement_system" || region.name != base) continue;
    if (region.canonical_name == command) return r;
    if (by_name == kNone) by_name = r;
  }
  return by_name;
}

std::string region_role_name(unsigned role) {
  static const char* const names[] = {
      "unknown", "function", "wrapper", "loop", "code", "parallel", "sections", "section", "workshare", "single",
      "single_sblock", "master", "critical", "critical_sblock", "atomic", "barrier", "implicit_barrier", "flush",
      "ordered", "ordered_sblock", "task", "task_create", "task_wait", "coll_one2all", "coll_all2one",
      "coll_all2all", "coll_other", "file_io", "point2point", "rma", "data_transfer", "artificial",
      "thread_create", "thread_wait", "task_untied", "allocate", "deallocate", "reallocate", "file_io_metadata"};
  return role < std::size(names) ? names[role] : "role" + std::to_string(role);
}

std::string paradigm_name(unsigned paradigm) {
  static const char* const names[] = {
      "unknown", "user", "compiler", "openmp", "mpi", "cuda", "measurement_system", "pthread", "hmpp", "ompss",
      "hardware", "gaspi", "upc", "shmem", "winthread", "qtthread", "acethread", "tbbthread", "openacc", "opencl",
      "mtapi", "sampling", "none", "hip", "kokkos"};
  return paradigm < std::size(names) ? names[paradigm] : "paradigm" + std::to_string(paradigm);
}

std::string collective_op_name(unsigned op) {
  static const char* const names[] = {
      "barrier", "bcast", "gather", "gatherv", "scatter", "scatterv", "allgather", "allgatherv", "alltoall",
      "alltoallv", "alltoallw", "allreduce", "reduce", "reduce_scatter", "scan", "exscan", "reduce_scatter_block",
      "create_handle", "destroy_handle", "allocate", "deallocate", "create_handle_and_allocate",
      "destroy_handle_and_deallocate"};
  return op < std::size(names) ? names[op] : "op" + std::to_string(op);
}

}  // namespace cubescale::trace
