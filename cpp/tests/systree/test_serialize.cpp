#include <gtest/gtest.h>

#include <random>

#include "cubescale/common/bytes.hpp"
#include "cubescale/systree/names.hpp"
#include "cubescale/systree/serialize.hpp"
#include "cubescale/systree/shapes.hpp"

using namespace cubescale;
using namespace cubescale::systree;

TEST(Serialize, RoundTrip) {
  for (const auto& tree : {regular_sequence(parse_shape("juqueen-threads")), figure4_sequence()}) {
    const auto bytes = serialize(tree);
    EXPECT_TRUE(deserialize(bytes) == tree);
  }
}

TEST(Serialize, FullJuqueenIsSmallerThanScorePsFigure) {
  // Paper 000 reports 672 bytes for Score-P's sequence definitions at full JUQUEEN.
  EXPECT_LE(serialize(regular_sequence(parse_shape("juqueen"))).size(), 672u);
  EXPECT_LE(serialize(regular_sequence(parse_shape("juqueen-threads"))).size(), 672u);
}

TEST(Serialize, EveryTruncationIsAFormatError) {
  const auto bytes = serialize(figure4_sequence());
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    try {
      deserialize(std::string_view(bytes).substr(0, n), "cut.bin");
      FAIL() << "truncation at " << n << " was accepted";
    } catch (const FormatError& e) {
      EXPECT_EQ(e.file(), "cut.bin");
      EXPECT_LE(e.offset(), n);
    }
  }
}

TEST(Serialize, WrongVersionAndMagicAreNamed) {
  auto bytes = serialize(figure4_sequence());
  auto wrong_version = bytes;
  wrong_version[8] = 9;
  try {
    deserialize(wrong_version, "v.bin");
    FAIL();
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("version 9"), std::string::npos);
    EXPECT_EQ(e.offset(), 8u);
  }
  auto wrong_magic = bytes;
  wrong_magic[0] = 'X';
  EXPECT_THROW(deserialize(wrong_magic), FormatError);
}

TEST(Serialize, HostileCountsNeverAllocate) {
  ByteWriter w;
  w.bytes("CSSEQTRE");
  w.u16(1);
  w.varint(1);
  w.string("machine");
  w.varint(std::uint64_t(1) << 60);  // absurd record count
  EXPECT_THROW(deserialize(w.take()), FormatError);

  // Copies whose product overflows the element count.
  ByteWriter o;
  o.bytes("CSSEQTRE");
  o.u16(1);
  o.varint(2);
  o.string("machine");
  o.string("node");
  o.varint(3);
  for (auto [cls, copies, children] : {std::tuple{0, 1, 1}, {1, 1ull << 40, 1}, {1, 1ull << 40, 0}}) {
    o.u8(0);
    o.varint(cls);
    o.varint(copies);
    o.varint(0);
    o.varint(children);
  }
  EXPECT_THROW(deserialize(o.take()), FormatError);
}

TEST(Serialize, RandomBytesNeverCrash) {
  std::mt19937 rng(1);
  const auto good = serialize(figure4_sequence());
  for (int i = 0; i < 20000; ++i) {
    std::string bytes = good;
    const int flips = 1 + rng() % 4;
    for (int f = 0; f < flips; ++f) bytes[rng() % bytes.size()] = static_cast<char>(rng());
    try {
      const auto tree = deserialize(bytes);
      EXPECT_TRUE(tree.canonical());
    } catch (const FormatError&) {
    }
  }
}

TEST(Serialize, JsonHasEveryRecord) {
  const auto json = to_json(figure4_sequence());
  EXPECT_NE(json.find("\"gpu_stream\""), std::string::npos);
  EXPECT_NE(json.find("\"copies\": 16"), std::string::npos);
}

TEST(Names, StreamsInBoundedChunks) {
  NameMap names;
  for (std::uint64_t i = 0; i < 1000; ++i) names.add(i * 7, "host" + std::to_string(i));
  const auto bytes = names.serialize(64);
  NameStreamReader reader(bytes, "names.bin");
  std::vector<std::pair<std::uint64_t, std::string>> chunk;
  std::size_t total = 0, chunks = 0;
  while (reader.next(chunk)) {
    EXPECT_LE(chunk.size(), 64u);
    total += chunk.size();
    ++chunks;
  }
  EXPECT_EQ(total, 1000u);
  EXPECT_EQ(chunks, 16u);
  const auto back = NameMap::deserialize(bytes);
  EXPECT_EQ(back.find(7 * 999).value(), "host999");
  EXPECT_FALSE(back.find(1).has_value());
  for (std::size_t n = 0; n + 1 < bytes.size(); ++n)
    EXPECT_THROW(NameMap::deserialize(std::string_view(bytes).substr(0, n)), FormatError);
}

TEST(Names, StreamsAppendToAMap) {
  NameMap first, collected;
  for (std::uint64_t i = 0; i < 100; ++i) first.add(i * 3, "node" + std::to_string(i));
  collected.add(1000, "earlier");
  EXPECT_EQ(collected.add_stream(first.serialize(16), "names").value(), 99u * 3);
  EXPECT_EQ(collected.size(), 101u);
  EXPECT_EQ(collected.find(42).value(), "node14");
  EXPECT_EQ(collected.find(1000).value(), "earlier");
  EXPECT_FALSE(collected.add_stream(NameMap().serialize(16), "names").has_value());
  const auto bytes = first.serialize(16);
  EXPECT_THROW(collected.add_stream(std::string_view(bytes).substr(0, bytes.size() / 2), "names"), FormatError);
}
