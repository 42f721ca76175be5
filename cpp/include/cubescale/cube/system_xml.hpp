#pragma once
// The location groups of an anchor.xml's system tree, read in one pass without the tokenizer
// where they are laid out as CubeW and Score-P write them:
//
//   <locationgroup Id="7">
//   <name>MPI Rank 7</name>
//   <rank>7</rank>
//   <type>process</type>
//   <location Id="7">
//   <name>Master thread</name>
//   <rank>0</rank>
//   <type>thread</type>
//   </location>
//   </locationgroup>
//
// Why: these elements are most of the non-region XML of a large run (two elements and six
// fields per single-threaded process), and the general parser spends ~400 ns on each element.
//
// Exactly this shape is read: attribute `Id` alone in double quotes, the fields name, rank and
// type (each optional, any order, plain text without entities), white space between tags, and
// locations after the fields. A group with anything else (another attribute, `<attr>`, a
// comment, an entity) is left to the general parser, from its start tag, with nothing taken
// from it; so is a group with a malformed number, which that parser then reports.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace cubescale::cube {

struct PlainSystemElement {
  std::string_view name, type;  // views into the document
  std::uint64_t id = 0;
  std::int64_t rank = -1;       // -1: no <rank>
  std::size_t offset = 0;       // of the start tag
  std::uint32_t locations = 0;  // for a group: how many location elements follow it
};

// Reads consecutive <locationgroup> elements from `pos`, which is the '<' of a start tag
// (white space between the groups is skipped). Appends each group, followed by its locations,
// to `out`, and returns the position after the last group read (`pos` when none was).
std::size_t read_plain_groups(std::string_view xml, std::size_t pos, std::vector<PlainSystemElement>& out);

}  // namespace cubescale::cube
