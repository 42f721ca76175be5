// Score-P's filter files as scorep-score -g writes them and as Score-P reads and matches them:
// fnmatch patterns with backslash escapes, MANGLED rules, the last matching rule deciding, file
// blocks, comments, and one-line errors naming the line.
#include <gtest/gtest.h>

#include <fnmatch.h>

#include <random>
#include <stdexcept>
#include <string>

#include "cubescale/measure/filter.hpp"

using namespace cubescale::measure;

TEST(Glob, WildcardsSetsAndClassesAsFnmatch) {
  EXPECT_TRUE(glob_match("*", ""));
  EXPECT_TRUE(glob_match("*/io/*", "/src/io/read.c"));  // '*' crosses '/' (no FNM_PATHNAME)
  EXPECT_TRUE(glob_match("solve_?", "solve_x"));
  EXPECT_FALSE(glob_match("solve_?", "solve_"));
  EXPECT_TRUE(glob_match("[a-c]x", "bx"));
  EXPECT_FALSE(glob_match("[!a-c]x", "bx"));
  EXPECT_TRUE(glob_match("[^a-c]x", "dx"));
  EXPECT_TRUE(glob_match("[]]", "]"));  // ']' first in a set is a member
  EXPECT_TRUE(glob_match("v[[:digit:]]", "v7"));
  EXPECT_FALSE(glob_match("v[[:digit:]]", "vx"));
  EXPECT_TRUE(glob_match("a[b", "a[b"));  // a '[' without ']' is itself
  EXPECT_FALSE(glob_match("Main", "main"));  // case-sensitive
}

TEST(Glob, BackslashEscapesAsFnmatch) {
  EXPECT_TRUE(glob_match("a\\*b", "a*b"));
  EXPECT_FALSE(glob_match("a\\*b", "axb"));
  EXPECT_TRUE(glob_match("a\\?", "a?"));
  EXPECT_FALSE(glob_match("a\\?", "ab"));
  EXPECT_TRUE(glob_match("\\[0\\]", "[0]"));
  EXPECT_TRUE(glob_match("\\!neg", "!neg"));
  EXPECT_TRUE(glob_match("void\\ f()", "void f()"));
  EXPECT_TRUE(glob_match("a\\\\b", "a\\b"));
  EXPECT_TRUE(glob_match("x\\y", "xy"));  // an escaped ordinary character is itself
  EXPECT_TRUE(glob_match("[\\]]", "]"));
  EXPECT_FALSE(glob_match("a\\", "a\\"));  // a lone backslash at the end matches nothing
}

TEST(Filter, EscapedBlanksCommentsAndBangsInScorepScoreNames) {
  const auto f = RegionFilter::parse(
      "SCOREP_REGION_NAMES_BEGIN\n"
      "  EXCLUDE\n"
      "    void\\ CommSyncPosVel(Domain&)  # a comment after the pattern\n"
      "    std::vector<int>::operator\\[\\](unsigned\\ long)\n"
      "    a\\*b \\!neg tag\\#1\n"
      "SCOREP_REGION_NAMES_END\n");
  EXPECT_FALSE(f.included("void CommSyncPosVel(Domain&)"));
  EXPECT_FALSE(f.included("std::vector<int>::operator[](unsigned long)"));
  EXPECT_FALSE(f.included("a*b"));
  EXPECT_TRUE(f.included("axb"));
  EXPECT_FALSE(f.included("!neg"));
  EXPECT_FALSE(f.included("tag#1"));
  EXPECT_TRUE(f.included("void"));  // the escaped blank kept the pattern one word
}

TEST(Filter, MangledRulesMatchTheMangledNameOrTheNameWithoutOne) {
  const auto f = RegionFilter::parse(
      "SCOREP_REGION_NAMES_BEGIN\n EXCLUDE\n  MANGLED _Z8CommSendR6DomainiiPMS_FRdiEiiibb\n"
      "  _Z5usagev\n DEMANGLED helper\nSCOREP_REGION_NAMES_END\n");
  const std::string name = "void CommSend(Domain&, int, int, Real_t& (Domain::**)(int), int, int, int, bool, bool)";
  EXPECT_FALSE(f.included({name, "_Z8CommSendR6DomainiiPMS_FRdiEiiibb", std::nullopt}));
  EXPECT_TRUE(f.included({name, "_Z4main", std::nullopt}));
  EXPECT_FALSE(f.included({"void usage()", "_Z5usagev", std::nullopt}));  // MANGLED lasts to the rule's end
  EXPECT_TRUE(f.included({"_Z5usagev", "_Z5usagem", std::nullopt}));     // not the name when mangled exists
  EXPECT_FALSE(f.included({"_Z5usagev", {}, std::nullopt}));             // no mangled name: the name
  EXPECT_FALSE(f.included({"helper", "_Z6helperv", std::nullopt}));       // DEMANGLED: the name again
  EXPECT_TRUE(f.included({"_Z6helperv", "_Z6helperv2", std::nullopt}));
}

TEST(Filter, LastMatchingRuleWinsAndANewRuleEndsMangled) {
  const auto f = RegionFilter::parse(
      "SCOREP_REGION_NAMES_BEGIN\n EXCLUDE *\n INCLUDE MANGLED _Z4keepv\n EXCLUDE keep*\n INCLUDE keep_me\n"
      "SCOREP_REGION_NAMES_END\n");
  EXPECT_FALSE(f.included("other"));
  EXPECT_FALSE(f.included({"keep()", "_Z4keepv", std::nullopt}));  // included, then excluded by keep*
  EXPECT_TRUE(f.included({"keep_me", "_Z7keep_mev", std::nullopt}));  // INCLUDE after EXCLUDE, not MANGLED
  EXPECT_TRUE(f.included({"x", "_Z4keepv", std::nullopt}));
}

TEST(Filter, FileBlocksMatchTheSourceFile) {
  const auto f = RegionFilter::parse(
      "SCOREP_FILE_NAMES_BEGIN\n EXCLUDE *\n INCLUDE */src/*\nSCOREP_FILE_NAMES_END\n"
      "SCOREP_REGION_NAMES_BEGIN\n EXCLUDE tiny\nSCOREP_REGION_NAMES_END\n");
  EXPECT_TRUE(f.included("work", "/app/src/a.c"));
  EXPECT_FALSE(f.included("work", "/usr/include/b.h"));
  EXPECT_FALSE(f.included("tiny", "/app/src/a.c"));  // its name is excluded though its file is not
  EXPECT_TRUE(f.included("work"));  // no file: the runtime skips the file rules
  EXPECT_FALSE(f.included({"work", {}, std::string_view("")}));  // scorep-score matches '' against them
}

void expect_error(const char* text, const std::string& message) {
  try {
    RegionFilter::parse(text);
    ADD_FAILURE() << "no error for: " << text;
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(e.what(), message);
  }
}

TEST(Filter, SyntaxErrorsNameTheLine) {
  expect_error("# x\nSCOREP_REGION_NAMES_BEGIN\n EXCLUDE a\n", 
               "filter line 2: SCOREP_REGION_NAMES_BEGIN without its SCOREP_REGION_NAMES_END");
  expect_error("SCOREP_FILE_NAMES_BEGIN\n EXCLUDE a\nSCOREP_REGION_NAMES_END\n",
               "filter line 3: SCOREP_REGION_NAMES_END without SCOREP_REGION_NAMES_BEGIN");
  expect_error("SCOREP_REGION_NAMES_BEGIN\nSCOREP_FILE_NAMES_BEGIN\n",
               "filter line 2: SCOREP_FILE_NAMES_BEGIN inside the SCOREP_REGION_NAMES_BEGIN block of line 1");
  expect_error("SCOREP_FILE_NAMES_BEGIN\n EXCLUDE MANGLED a\nSCOREP_FILE_NAMES_END\n",
               "filter line 2: MANGLED only after EXCLUDE or INCLUDE in a SCOREP_REGION_NAMES block");
  expect_error("SCOREP_REGION_NAMES_BEGIN\n a\nSCOREP_REGION_NAMES_END\n",
               "filter line 2: unexpected 'a': a pattern belongs after EXCLUDE or INCLUDE inside a block");
  expect_error("SCOREP_REGION_NAMES_BEGIN\n EXCLUDE a\\\nSCOREP_REGION_NAMES_END\n",
               "filter line 2: a backslash at the end of a line (escaped line break) is not supported");
  EXPECT_NO_THROW(RegionFilter::parse("SCOREP_REGION_NAMES_BEGIN\r\n EXCLUDE a\r\nSCOREP_REGION_NAMES_END\r\n"));
}

// The matcher against the C library's fnmatch (what Score-P calls) on random patterns and names
// made of the characters that matter.
TEST(Glob, AgreesWithFnmatchOnRandomPatterns) {
  const std::string alphabet = "ab*?[]!^-\\:";
  std::mt19937 random(7);
  auto draw = [&](std::size_t max_length, const std::string& from) {
    std::string s(random() % (max_length + 1), ' ');
    for (auto& c : s) c = from[random() % from.size()];
    return s;
  };
  for (int i = 0; i < 200000; ++i) {
    const auto pattern = draw(7, alphabet), text = draw(6, "ab[]!^-\\:*?");
    ASSERT_EQ(glob_match(pattern, text), fnmatch(pattern.c_str(), text.c_str(), 0) == 0)
        << "pattern '" << pattern << "' text '" << text << "'";
  }
}
