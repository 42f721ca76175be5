#include "cubescale/cube/reader.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>
#include <unordered_map>

#include "cubescale/common/format_error.hpp"
#include "cubescale/common/recycled_buffers.hpp"
#include "cubescale/cube/anchor_xml.hpp"
#include "cubescale/cube/system_member.hpp"
#include "cubescale/cube/tar.hpp"
#include "cubescale/cube/values_io.hpp"

namespace cubescale::cube {

namespace {

// The bytes of an archive: a small file read into memory, a read-only mapping of a larger
// one, or an owned string.
class Archive {
 public:
  static std::shared_ptr<Archive> from_file(const std::string& path) {
    auto a = std::make_shared<Archive>();
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw std::system_error(errno, std::generic_category(), path);
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
      const int e = errno;
      ::close(fd);
      throw std::system_error(e, std::generic_category(), path);
    }
    if (S_ISDIR(st.st_mode)) {
      ::close(fd);
      throw std::system_error(EISDIR, std::generic_category(), path);
    }
    a->size_ = static_cast<std::size_t>(st.st_size);
    if (a->size_ > 0 && a->size_ <= kReadLimit) {
      try {
        a->read_ = read_buffer(a->size_);
      } catch (...) {
        ::close(fd);
        throw;
      }
      std::size_t done = 0;
      while (done < a->size_) {
        const auto n = ::pread(fd, a->read_.get() + done, a->size_ - done, static_cast<off_t>(done));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
          const int e = n < 0 ? errno : EIO;
          ::close(fd);
          throw std::system_error(e, std::generic_category(), path);
        }
        done += static_cast<std::size_t>(n);
      }
    } else if (a->size_ > 0) {
      void* p = ::mmap(nullptr, a->size_, PROT_READ, MAP_PRIVATE, fd, 0);
      if (p == MAP_FAILED) {
        const int e = errno;
        ::close(fd);
        throw std::system_error(e, std::generic_category(), path);
      }
      a->mapped_ = static_cast<const char*>(p);
    }
    ::close(fd);
    return a;
  }
  static std::shared_ptr<Archive> own(std::string bytes) {
    auto a = std::make_shared<Archive>();
    a->owned_ = std::move(bytes);
    return a;
  }
  Archive() = default;
  Archive(const Archive&) = delete;
  Archive& operator=(const Archive&) = delete;
  ~Archive() {
    if (mapped_) ::munmap(const_cast<char*>(mapped_), size_);
  }
  std::string_view bytes() const {
    if (read_) return {read_.get(), size_};
    return mapped_ ? std::string_view(mapped_, size_) : std::string_view(owned_);
  }

 private:
  // Files of up to some MiB are read: mapping costs more in page faults and unmapping than
  // copying them. They are read into recycled buffers, which are page-aligned (so the copy
  // avoids the slow case of copy_bytes.hpp) and whose pages are already mapped: a fresh page
  // costs a fault and its zeroing, which for a file of megabytes is as much as reading it.
  static constexpr std::size_t kReadLimit = RecycledBuffers::kMaxBytes - 1;
  struct Release {
    std::size_t recycled_bytes;
    void operator()(char* p) const {
      if (recycled_bytes) RecycledBuffers::shared().give_back(reinterpret_cast<std::uint8_t*>(p), recycled_bytes);
      else delete[] p;
    }
  };
  using Buffer = std::unique_ptr<char[], Release>;
  static Buffer read_buffer(std::size_t bytes) {
    if (!RecycledBuffers::serves(bytes)) return Buffer(new char[bytes], Release{0});
    auto* p = reinterpret_cast<char*>(RecycledBuffers::shared().take_for_overwrite(bytes));
    if (!p) throw std::bad_alloc();
    return Buffer(p, Release{bytes});
  }
  Buffer read_{nullptr, Release{0}};
  const char* mapped_ = nullptr;
  std::size_t size_ = 0;
  std::string owned_;
};

// Everything a metric loader needs; shared by the loader closure and kept alive by it.
struct OpenedFile {
  std::shared_ptr<Archive> archive;
  std::string name;
  std::unordered_map<std::string, TarMember> members;
  std::vector<std::uint32_t> deep, wide;
  std::vector<std::uint32_t> column_of;  // empty when location Ids are in document order
  std::vector<Metric> metrics;           // only file id, kind and data type are used
  std::size_t locations = 0;

  std::string_view member(const TarMember& m) const { return archive->bytes().substr(m.data_offset, m.size); }
  const TarMember* find(const std::string& n) const {
    const auto it = members.find(n);
    return it == members.end() ? nullptr : &it->second;
  }
};

Severity load_metric(const OpenedFile& f, std::size_t metric) {
  const auto& m = f.metrics[metric];
  const auto cnodes = f.deep.size();
  const auto id = std::to_string(m.file_id);
  const auto* index_member = f.find(id + ".index");
  const auto* data_member = f.find(id + ".data");
  if (!index_member || !data_member) return Severity(m.dtype, cnodes, f.locations);  // no data: all zero
  const auto index = parse_index(f.member(*index_member), cnodes, {f.name, id + ".index"});
  // Rows in the file are written whole; only the others need clearing.
  auto out = Severity::for_overwrite(m.dtype, cnodes, f.locations);
  read_data(f.member(*data_member), index, row_order(m.kind, f.deep, f.wide), f.column_of, out, {f.name, id + ".data"});
  out.zero_absent_rows();
  return out;
}

std::vector<std::uint32_t> columns_of(const Definitions& defs) {
  bool identity = true;
  for (std::size_t l = 0; l < defs.location_file_id.size() && identity; ++l) identity = defs.location_file_id[l] == l;
  if (identity) return {};
  std::vector<std::uint32_t> cols(defs.location_file_id.size());
  for (std::size_t l = 0; l < cols.size(); ++l) cols[l] = static_cast<std::uint32_t>(defs.location_file_id[l]);
  return cols;
}

std::shared_ptr<Report> open_archive(std::shared_ptr<Archive> archive, const std::string& name) {
  auto f = std::make_shared<OpenedFile>();
  f->archive = std::move(archive);
  f->name = name;
  for (auto& m : list_tar(f->archive->bytes(), name)) f->members.emplace(m.name, std::move(m));
  const auto* anchor = f->find("anchor.xml");
  if (!anchor) throw FormatError(name, "anchor.xml", 0, "no anchor.xml member: not a CUBE4 report");
  const auto* system = f->find(kSystemMember);
  // A plain anchor.xml is parsed where it lies in the archive; only a gzipped one needs a buffer.
  const auto stored_anchor = f->member(*anchor);
  // Regions are parsed from these bytes later (see Report::definitions()): they stay alive
  // with the regions, as the mapped archive or as the inflated text.
  DeferredRegions regions{f->archive, stored_anchor, name, {}};
  if (is_gzip(stored_anchor)) {
    auto inflated = std::make_shared<const std::string>(inflate_if_gzip(stored_anchor, name, "anchor.xml"));
    regions.xml = *inflated;
    regions.owner = std::move(inflated);
  }
  auto [defs, region_offsets] = parse_anchor_parts(regions.xml, name, AnchorOptions{system != nullptr});
  regions.offsets = std::move(region_offsets);
  if (system) decode_system_member(f->member(*system), defs, name);
  f->deep = deep_order(defs);
  f->wide = wide_order(defs);
  f->column_of = columns_of(defs);
  f->locations = defs.locations.size();
  for (const auto& m : defs.metrics) {
    Metric slim;
    slim.file_id = m.file_id;
    slim.kind = m.kind;
    slim.dtype = m.dtype;
    f->metrics.push_back(std::move(slim));
  }
  auto loader = [f](std::size_t metric) { return load_metric(*f, metric); };
  return std::make_shared<Report>(std::move(defs), std::move(loader), std::move(regions));
}

}  // namespace

std::shared_ptr<Report> open_cubex(const std::string& path) { return open_archive(Archive::from_file(path), path); }

std::shared_ptr<Report> open_cubex_bytes(std::string bytes, const std::string& name) {
  return open_archive(Archive::own(std::move(bytes)), name);
}

void load_all(const Report& report) {
  for (std::size_t m = 0; m < report.metric_count(); ++m)
    if (!is_derived(report.structure().metrics[m])) report.values(m);  // derived ones are computed on use
}

}  // namespace cubescale::cube
