#pragma once
// anchor.xml: the definitions of a CUBE4 report. The parser is a single loop over tokens
// with explicit stacks (hostile nesting cannot overflow the C stack); it accepts the CUBE4
// layout and CUBE3-style system tags (<machine>, <node>, <process>, <thread>). The writer
// follows CubeW's layout, which CubeLib's grammar-based parser requires.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cubescale/cube/definitions.hpp"

namespace cubescale::cube {

// The member every anchor parser names in its FormatErrors.
inline constexpr const char* kAnchorMember = "anchor.xml";
// Far deeper than any real document; bounds the parsers' explicit stacks against hostile nesting.
inline constexpr std::size_t kMaxAnchorNesting = 100000;

struct AnchorOptions {
  // Skip the <system> element (its bytes are still checked for a closing tag): used when the
  // system tree comes from our compact member instead.
  bool skip_system = false;
};

// Parses anchor.xml (already inflated). Throws FormatError naming `file`, member
// "anchor.xml" and the byte offset.
Definitions parse_anchor(std::string_view xml, const std::string& file, AnchorOptions options = {});

// The same without reading the regions' names: `defs.regions` is empty (call paths already
// know their region's index), `region_offsets` tell parse_regions() where each one starts.
// The bodies of regions are not checked yet; parse_regions() does that.
struct AnchorParts {
  Definitions defs;
  std::vector<std::size_t> region_offsets;
};
AnchorParts parse_anchor_parts(std::string_view xml, const std::string& file, AnchorOptions options = {});

// True when `bytes` start with the gzip magic.
bool is_gzip(std::string_view bytes);
// Inflates a gzip-compressed anchor.xml; returns the input unchanged when it is not gzipped.
std::string inflate_if_gzip(std::string_view bytes, const std::string& file, const std::string& member);

struct AnchorText {
  std::string xml;
  // Our location index of each <location> in the order written: data columns follow it.
  std::vector<std::uint32_t> location_order;
};
// Writes anchor.xml with ids renumbered to our indices (ids 0..n-1 in preorder).
AnchorText write_anchor(const Definitions& defs);

// The inner text of <topologies> with every <coord locId="i"> renamed to locId="new_id[i]";
// nullopt when a coordinate names anything else (lgId, stnId, CUBE3 forms) or an unknown Id.
std::optional<std::string> remap_location_ids(std::string_view topologies, const std::vector<std::uint64_t>& new_id);

}  // namespace cubescale::cube
