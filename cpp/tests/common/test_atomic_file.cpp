// AtomicFile: whole or absent, unique exclusive temporaries, symlinks never followed, errno kept.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <system_error>

#include "cubescale/common/atomic_file.hpp"

using cubescale::AtomicFile;
using cubescale::NotARegularFile;
namespace fs = std::filesystem;

namespace {

// A fresh directory per test: the tests count every file in it.
std::string fresh_directory() {
  std::string pattern = ::testing::TempDir() + "/atomic_file_XXXXXX";
  if (!::mkdtemp(pattern.data())) throw std::system_error(errno, std::generic_category(), pattern);
  return pattern;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void spit(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

std::set<std::string> names_in(const std::string& directory) {
  std::set<std::string> names;
  for (const auto& entry : fs::directory_iterator(directory)) names.insert(entry.path().filename().string());
  return names;
}

mode_t current_umask() {
  const mode_t mask = ::umask(0);
  ::umask(mask);
  return mask;
}

// RLIMIT_FSIZE makes writes past `bytes` fail with EFBIG (SIGXFSZ ignored): a full disk
// without mounting one.
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    ::getrlimit(RLIMIT_FSIZE, &old_);
    old_handler_ = ::signal(SIGXFSZ, SIG_IGN);
    rlimit limit = old_;
    limit.rlim_cur = bytes;
    ::setrlimit(RLIMIT_FSIZE, &limit);
  }
  ~FileSizeLimit() {
    ::setrlimit(RLIMIT_FSIZE, &old_);
    ::signal(SIGXFSZ, old_handler_);
  }

 private:
  rlimit old_{};
  sighandler_t old_handler_;
};

}  // namespace

TEST(AtomicFile, CommitReplacesTheTargetWholeAndLeavesNoTemporary) {
  const auto dir = fresh_directory();
  const auto target = dir + "/report.cubex";
  spit(target, "old");
  {
    AtomicFile file(target);
    file.write("new contents", 12);
    EXPECT_EQ(slurp(target), "old");  // untouched until commit
    EXPECT_EQ(names_in(dir).size(), 2u);
    struct stat st {};
    ASSERT_EQ(::lstat(file.temporary().c_str(), &st), 0);
    EXPECT_TRUE(S_ISREG(st.st_mode));
    EXPECT_EQ(st.st_mode & 0777, 0644 & ~current_umask());
    file.commit();
    EXPECT_THROW(file.commit(), std::logic_error);
  }
  EXPECT_EQ(slurp(target), "new contents");
  EXPECT_EQ(names_in(dir), std::set<std::string>{"report.cubex"});
  fs::remove_all(dir);
}

TEST(AtomicFile, WithoutCommitTheOldFileStays) {
  const auto dir = fresh_directory();
  const auto target = dir + "/report.cubex";
  spit(target, "old");
  {
    AtomicFile file(target);
    file.write("half", 4);
  }
  EXPECT_EQ(slurp(target), "old");
  EXPECT_EQ(names_in(dir), std::set<std::string>{"report.cubex"});
  fs::remove_all(dir);
}

TEST(AtomicFile, SymlinkAtTheTargetIsReplacedItsTargetNeverWritten) {
  const auto dir = fresh_directory();
  const auto victim = dir + "/victim", target = dir + "/report.cubex";
  spit(victim, "precious");
  fs::create_symlink(victim, target);
  AtomicFile file(target);
  file.write("report", 6);
  file.commit();
  EXPECT_EQ(slurp(victim), "precious");
  EXPECT_FALSE(fs::is_symlink(target));  // replaced as mv replaces it
  EXPECT_EQ(slurp(target), "report");
  fs::remove_all(dir);
}

TEST(AtomicFile, TemporaryNamesAreUniqueAndSayWhoseTheyAre) {
  const std::regex scheme(R"(\.run\.cubex\.cubescale-tmp\.[A-Za-z0-9-]+\.)" + std::to_string(::getpid()) +
                          R"(\.[0-9a-f]{16})");
  std::set<std::string> names;
  for (int i = 0; i < 1000; ++i) {
    names.insert(cubescale::temporary_name("run.cubex"));
    ASSERT_TRUE(std::regex_match(*names.rbegin(), scheme)) << *names.rbegin();
  }
  EXPECT_EQ(names.size(), 1000u);
  // A long target name is cut so that the temporary's name stays within NAME_MAX, and never
  // inside a UTF-8 character ("\xc3\xa9" is e-acute, its bytes 150 and 151).
  const std::string longest(255, 'x');
  EXPECT_LE(cubescale::temporary_name(longest).size(), 255u);
  EXPECT_EQ(cubescale::temporary_name(std::string(149, 'x') + "\xc3\xa9.cubex").rfind("." + std::string(149, 'x') + ".cubescale-tmp.", 0), 0u);
  const auto dir = fresh_directory();
  AtomicFile file(dir + "/" + longest);
  file.write("x", 1);
  file.commit();
  EXPECT_EQ(slurp(dir + "/" + longest), "x");
  fs::remove_all(dir);
}

TEST(AtomicFile, ErrorsCarryErrnoAndTheTarget) {
  const auto dir = fresh_directory();
  const auto missing = dir + "/no/such/dir/report.cubex";
  try {
    AtomicFile file(missing);
    FAIL() << "created a file in a missing directory";
  } catch (const std::system_error& e) {
    EXPECT_EQ(e.code().value(), ENOENT);
    EXPECT_EQ(std::string(e.what()).rfind(missing + ": ", 0), 0u) << e.what();
  }
  // A directory at the target: refused before anything is written.
  fs::create_directory(dir + "/taken");
  try {
    AtomicFile file(dir + "/taken");
    FAIL() << "opened a directory as the target";
  } catch (const std::system_error& e) {
    EXPECT_EQ(e.code().value(), EISDIR);
  }
  // One made while the data was written: the rename is refused and the temporary goes.
  {
    AtomicFile file(dir + "/later");
    file.write("x", 1);
    fs::create_directory(dir + "/later");
    try {
      file.commit();
      FAIL() << "renamed a file over a directory";
    } catch (const std::system_error& e) {
      EXPECT_EQ(e.code().value(), EISDIR);
    }
  }
  EXPECT_EQ(names_in(dir), (std::set<std::string>{"later", "taken"}));
  fs::remove_all(dir);
}

TEST(AtomicFile, ADeviceOrFifoAtTheTargetIsRefusedAndKept) {
  // Renaming over it would replace it by a regular file (as root: /dev/null).
  const auto dir = fresh_directory();
  const auto fifo = dir + "/out.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  fs::create_symlink(fifo, dir + "/link");  // as /dev/stdout links to a descriptor
  for (const std::string target : {fifo, std::string("/dev/null"), dir + "/link"}) {
    try {
      AtomicFile file(target);
      FAIL() << "opened " << target;
    } catch (const NotARegularFile& e) {
      EXPECT_EQ(std::string(e.what()).rfind(target + ": ", 0), 0u) << e.what();  // names the target
      EXPECT_EQ(e.code().value(), EEXIST);
    }
  }
  {  // a FIFO made while the data was written
    AtomicFile file(dir + "/late.fifo");
    file.write("x", 1);
    ASSERT_EQ(::mkfifo((dir + "/late.fifo").c_str(), 0644), 0);
    EXPECT_THROW(file.commit(), NotARegularFile);
  }
  EXPECT_TRUE(fs::is_fifo(fifo) && fs::is_fifo(dir + "/late.fifo"));
  EXPECT_TRUE(fs::is_character_file("/dev/null"));
  EXPECT_TRUE(fs::is_symlink(dir + "/link"));
  EXPECT_EQ(names_in(dir), (std::set<std::string>{"late.fifo", "link", "out.fifo"}));
  // A dangling symlink is replaced, as one to a regular file (the test above).
  fs::create_symlink(dir + "/nowhere", dir + "/dangling");
  AtomicFile file(dir + "/dangling");
  file.write("x", 1);
  file.commit();
  EXPECT_FALSE(fs::is_symlink(dir + "/dangling"));
  fs::remove_all(dir);
}

TEST(AtomicFile, FailedWriteIsSystemErrorAndLeavesTheOldFile) {
  const auto dir = fresh_directory();
  const auto target = dir + "/report.cubex";
  spit(target, "old");
  const std::string block(1 << 20, 'x');
  int error = 0;
  {
    FileSizeLimit limit(64 << 10);
    try {
      AtomicFile file(target);
      file.write(block.data(), block.size());  // stdio may hold it until the flush in commit()
      file.commit();
    } catch (const std::system_error& e) {
      error = e.code().value();
    }
  }
  EXPECT_EQ(error, EFBIG);
  EXPECT_EQ(slurp(target), "old");
  EXPECT_EQ(names_in(dir), std::set<std::string>{"report.cubex"});
  fs::remove_all(dir);
}
