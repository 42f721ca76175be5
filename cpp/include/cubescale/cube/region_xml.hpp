#pragma once
// The <region> elements of anchor.xml. Most of an anchor.xml is regions (a Score-P report
// defines every function it instrumented, called or not), yet reading values needs only their
// ids. So the anchor parser notes where each <region> starts, and the regions are parsed from
// there, either at once or when a report's definitions are first asked for.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cubescale/cube/definitions.hpp"

namespace cubescale::cube {

// Parses the <region> elements whose start tags begin at `offsets` in `xml` (anchor.xml,
// inflated), in that order. Throws FormatError naming `file`, "anchor.xml" and the offset.
std::vector<Region> parse_regions(std::string_view xml, const std::string& file, const std::vector<std::size_t>& offsets);

// Where the end tag of the region whose start tag ends at `body` begins: the first
// "</region>" after it. npos when the body holds a comment, CDATA or a processing instruction
// (which could hide markup) or no such end tag: then the body must be tokenized. Without
// those, every '<' starts a tag (the tokenizer rejects '<' in attribute values), so this is
// the end tag of the region or of a region nested in it, which the next end tag then fails
// to match.
std::size_t region_body_end(std::string_view xml, std::size_t body);

// Notes the regions that follow the one whose end tag starts at `close`, as long as they are
// written as CubeW writes them: "</region>", whitespace, `<region id="N"` and more attributes,
// '>', a body that region_body_end() can skip, "</region>". Appends their ids and offsets and
// returns where the end tag of the last one noted starts (`close` when none is): tokenizing
// resumes there. Anything else ends the run. Like the bodies, the start tags past their id
// are checked by parse_regions(); a tag it accepts ends where this scan ends it.
std::size_t note_region_run(std::string_view xml, std::size_t close, std::vector<std::uint64_t>& ids,
                            std::vector<std::size_t>& offsets);

// Regions of an opened report that are not parsed yet: where they are and what keeps the
// bytes alive (the mapped file, or the inflated anchor.xml).
struct DeferredRegions {
  std::shared_ptr<const void> owner;
  std::string_view xml;
  std::string file;
  std::vector<std::size_t> offsets;

  std::vector<Region> parse() const { return parse_regions(xml, file, offsets); }
};

}  // namespace cubescale::cube
