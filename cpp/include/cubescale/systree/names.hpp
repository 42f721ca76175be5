#pragma once
// Real names (e.g. host names) kept apart from the sequence records, keyed by an element's
// all-kinds depth-first index. Sequence records cannot carry individual names (paper 000);
// this map can, and its byte form is a stream of bounded chunks, so a receiver never has
// to hold more than one chunk to pass names on or write them out.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cubescale::systree {

class NameMap {
 public:
  void add(std::uint64_t index, std::string_view name);
  // Adds every entry of a name stream (as serialize() writes it); returns the last index read,
  // nullopt for an empty stream. Malformed streams raise FormatError naming `source`.
  std::optional<std::uint64_t> add_stream(std::string_view bytes, const std::string& source);
  std::optional<std::string_view> find(std::uint64_t index) const;
  std::size_t size() const { return entries_.size(); }
  const std::vector<std::pair<std::uint64_t, std::string>>& entries() const;

  // Whole map as one byte stream of chunks of at most `chunk_entries` entries.
  std::string serialize(std::size_t chunk_entries = 4096) const;
  static NameMap deserialize(std::string_view bytes, const std::string& source = "");

 private:
  void sort() const;
  mutable std::vector<std::pair<std::uint64_t, std::string>> entries_;
  mutable bool sorted_ = true;
};

// Reads a name stream chunk by chunk: memory is bounded by one chunk.
class NameStreamReader {
 public:
  NameStreamReader(std::string_view bytes, std::string source);
  // Fills `out` with the next chunk; false at the end of the stream.
  bool next(std::vector<std::pair<std::uint64_t, std::string>>& out);

 private:
  std::string_view bytes_;
  std::string source_;
  std::size_t offset_ = 0;
  std::uint64_t last_index_ = 0;
  bool first_ = true;
  bool done_ = false;
};

}  // namespace cubescale::systree
