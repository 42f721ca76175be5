#pragma once
// anchor.xml: the definitions of a CUBE4 report. The parser is a single loop over tokens
// with explicit stacks (hostile nesting cannot overflow the C stack); it accepts the CUBE4
// layout and CUBE3-style system tags (<machine>, <node>, <process>, <thread>). The writer
// follows CubeW's layout, which CubeLib's grammar-based parser requires.
#include <cstdint>
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
// The system tree elements a skipped <system> element spells out in CUBE4's tags
// (options.skip_system; our writer, the only one of the system member, writes those): what
// the compact system member must expand to (decode_system_member), so that its counts cannot
// claim more than the document names (a padded member claimed 1.2e8 locations of a 2 MB
// report). `offset` is where <system> starts.
struct SystemCounts {
  std::uint64_t nodes = 0, groups = 0, locations = 0;
  std::size_t offset = 0;
};

struct AnchorParts {
  Definitions defs;
  std::vector<std::size_t> region_offsets;
  SystemCounts skipped_system;  // all zero unless the system element was skipped
};
AnchorParts parse_anchor_parts(std::string_view xml, const std::string& file, AnchorOptions options = {});

// True when `bytes` start with the gzip magic.
bool is_gzip(std::string_view bytes);
// Inflates a gzip-compressed anchor.xml; returns the input unchanged when it is not gzipped.
// The inflated size is capped by gzip_inflation_cap() of the gzipped size (a FormatError
// naming `member` beyond it), and bytes after the gzip stream are refused.
std::string inflate_if_gzip(std::string_view bytes, const std::string& file, const std::string& member);
// The most bytes `compressed` gzipped bytes may inflate to: kGzipRatio times as many, plus
// kGzipFloor. Real anchor.xml documents compress 4-16x (the shared reports, gzip -9), the
// XML of a regular machine of 65,536 locations 26x; deflate's largest ratio is 1032x, which
// let a 4 MB member claim 4 GB. 64x leaves real documents a margin of 2.5x over the most
// repetitive one measured, and the floor keeps small documents free of the ratio.
inline constexpr std::uint64_t kGzipRatio = 64;
inline constexpr std::uint64_t kGzipFloor = std::uint64_t(8) << 20;
std::uint64_t gzip_inflation_cap(std::uint64_t compressed);

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
