#include "io/Checkpoint.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>

#include <fcntl.h>
#include <unistd.h>

#include "common/Error.hpp"

namespace octoflow::io {

namespace {

// Slicing-by-8 tables of the reflected Castagnoli polynomial.
struct Crc32cTables {
  std::uint32_t table[8][256];
  Crc32cTables() {
    for (std::uint32_t n = 0; n < 256; ++n) {
      std::uint32_t crc = n;
      for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ (0x82F63B78u & (0u - (crc & 1u)));
      table[0][n] = crc;
    }
    for (std::uint32_t n = 0; n < 256; ++n)
      for (int t = 1; t < 8; ++t) table[t][n] = (table[t - 1][n] >> 8) ^ table[0][table[t - 1][n] & 0xFF];
  }
};
const Crc32cTables& crcTables() {
  static const Crc32cTables tables;
  return tables;
}

// Limits that keep a damaged file from asking for absurd allocations before its CRC is checked.
constexpr std::uint32_t kMaxNameBytes = 4096;
constexpr std::uint32_t kMaxEntries = 1u << 20;

// Where encoded bytes go: counted, kept in memory, or written to a file; the CRC runs along.
class Sink {
public:
  virtual ~Sink() = default;
  void put(const void* data, std::size_t bytes) {
    crc_ = crc32c(data, bytes, crc_);
    size_ += bytes;
    write(data, bytes);
  }
  template <class T>
  void value(T v) {
    put(&v, sizeof v);
  }
  void text(const std::string& s) {
    value(static_cast<std::uint32_t>(s.size()));
    put(s.data(), s.size());
  }
  void box(const NodeBox& b) {
    for (int axis = 0; axis < 3; ++axis) value<std::int64_t>(b.lo[axis]);
    for (int axis = 0; axis < 3; ++axis) value<std::int64_t>(b.size.size(axis));
  }
  std::uint32_t crc() const { return crc_; }
  std::uint64_t size() const { return size_; }

protected:
  virtual void write(const void* data, std::size_t bytes) = 0;

private:
  std::uint32_t crc_ = 0;
  std::uint64_t size_ = 0;
};

class CountingSink final : public Sink {
  void write(const void*, std::size_t) override {}
};

class MemorySink final : public Sink {
public:
  std::vector<unsigned char> bytes;

private:
  void write(const void* data, std::size_t count) override {
    const auto* p = static_cast<const unsigned char*>(data);
    bytes.insert(bytes.end(), p, p + count);
  }
};

class FileSink final : public Sink {
public:
  FileSink(std::FILE* file, const std::string& path) : file_(file), path_(path) {}

private:
  void write(const void* data, std::size_t bytes) override {
    if (bytes && std::fwrite(data, 1, bytes, file_) != bytes) throw OutputError(path_, std::strerror(errno));
  }
  std::FILE* file_;
  const std::string& path_;
};

// The body (everything between the fixed prefix and the CRC).
void encodeBody(const CheckpointFile& file, Sink& out) {
  const CheckpointHeader& h = file.header;
  out.text(h.solver);
  out.text(h.caseName);
  out.value<std::uint64_t>(h.caseHash);
  for (int axis = 0; axis < 3; ++axis) out.value<std::int64_t>(h.extent.size(axis));
  out.value<std::int64_t>(h.step);
  out.value<double>(h.time);
  out.value<std::int32_t>(h.rank);
  out.value<std::int32_t>(h.ranks);
  out.value(static_cast<std::uint32_t>(file.records.size()));
  for (const sim::StateRecord& record : file.records) {
    out.text(record.name);
    out.value<std::uint64_t>(record.bytes.size());
    out.put(record.bytes.data(), record.bytes.size());
  }
  out.value(static_cast<std::uint32_t>(file.arrays.size()));
  for (const sim::StateArray& array : file.arrays) {
    if (array.bytes.size() != array.expectedBytes())
      throw Error("checkpoint array '" + array.name + "' holds " + std::to_string(array.bytes.size()) +
                  " bytes, its box " + std::to_string(array.expectedBytes()));
    out.text(array.name);
    out.value<std::int32_t>(array.components);
    out.value<std::int32_t>(array.valueBytes);
    out.box(array.box);
    out.value<std::uint64_t>(array.bytes.size());
    out.put(array.bytes.data(), array.bytes.size());
  }
  out.value(static_cast<std::uint32_t>(file.pieces.size()));
  for (const CheckpointPieceEntry& piece : file.pieces) {
    out.text(piece.file);
    out.box(piece.box);
    out.value<std::uint64_t>(piece.bytes);
  }
}

constexpr std::size_t kPrefixBytes = sizeof kCheckpointMagic + 4 + 4 + 8;

void encode(const CheckpointFile& file, Sink& out) {
  CountingSink counter;
  encodeBody(file, counter);
  const std::uint64_t total = kPrefixBytes + counter.size() + sizeof(std::uint32_t);
  out.put(kCheckpointMagic, sizeof kCheckpointMagic);
  out.value(kByteOrderMark);
  out.value(file.header.version);
  out.value(total);
  encodeBody(file, out);
  const std::uint32_t crc = out.crc();
  out.put(&crc, sizeof crc);
}

// Bounds-checked reading of a file's bytes; every defect names the file.
class Source {
public:
  Source(const unsigned char* data, std::size_t size, const std::string& name) : data_(data), size_(size), name_(name) {}
  [[noreturn]] void fail(const std::string& problem) const { throw InputError(name_, "", problem); }
  const unsigned char* take(std::size_t bytes, const char* what) {
    if (bytes > size_ - at_)
      fail(std::string("truncated or damaged: ") + what + " runs past the end of the file (" +
           std::to_string(size_) + " bytes)");
    const unsigned char* p = data_ + at_;
    at_ += bytes;
    return p;
  }
  template <class T>
  T value(const char* what) {
    T v;
    std::memcpy(&v, take(sizeof v, what), sizeof v);
    return v;
  }
  std::string text(const char* what) {
    const auto length = value<std::uint32_t>(what);
    if (length > kMaxNameBytes) fail(std::string("damaged: ") + what + " of " + std::to_string(length) + " bytes");
    const unsigned char* p = take(length, what);
    return std::string(reinterpret_cast<const char*>(p), length);
  }
  std::uint32_t count(const char* what) {
    const auto n = value<std::uint32_t>(what);
    if (n > kMaxEntries) fail(std::string("damaged: ") + std::to_string(n) + " " + what);
    return n;
  }
  NodeBox box(const char* what) {
    NodeBox b;
    Index size[3];
    for (Index& lo : b.lo) lo = value<std::int64_t>(what);
    for (Index& s : size) {
      s = value<std::int64_t>(what);
      if (s < 0 || s > (Index{1} << 31)) fail(std::string("damaged: ") + what + " of size " + std::to_string(s));
    }
    // At most 2^40 nodes: a damaged size must not overflow the byte counts computed from it.
    if (static_cast<double>(size[0]) * static_cast<double>(size[1]) * static_cast<double>(size[2]) > 1099511627776.0)
      fail(std::string("damaged: ") + what + " of " + std::to_string(size[0]) + " x " + std::to_string(size[1]) +
           " x " + std::to_string(size[2]) + " nodes");
    b.size = Extent{size[0], size[1], size[2]};
    return b;
  }
  std::vector<unsigned char> blob(const char* what) {
    const auto bytes = value<std::uint64_t>(what);
    if (bytes > size_ - at_) take(static_cast<std::size_t>(-1), what);
    const unsigned char* p = take(static_cast<std::size_t>(bytes), what);
    return std::vector<unsigned char>(p, p + bytes);
  }
  std::size_t remaining() const { return size_ - at_; }

private:
  const unsigned char* data_;
  std::size_t size_;
  std::size_t at_ = 0;
  const std::string& name_;
};

std::string hex(std::uint64_t value) {
  char text[24];
  std::snprintf(text, sizeof text, "%016" PRIx64, value);
  return text;
}

std::vector<unsigned char> readWholeFile(const std::string& path, const std::string& what) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error)) throw InputError(path, "", what + " not found (no such file)");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, "", "cannot open " + what + ": " + std::strerror(errno));
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  in.seekg(0);
  std::vector<unsigned char> bytes(static_cast<std::size_t>(size));
  if (size > 0 && !in.read(reinterpret_cast<char*>(bytes.data()), size))
    throw InputError(path, "", "cannot read " + what + ": " + std::strerror(errno));
  return bytes;
}

}  // namespace

std::uint32_t crc32c(const void* data, std::size_t bytes, std::uint32_t crc) {
  const auto& t = crcTables().table;
  const auto* p = static_cast<const unsigned char*>(data);
  crc = ~crc;
  while (bytes >= 8) {
    std::uint32_t low, high;
    std::memcpy(&low, p, 4);
    std::memcpy(&high, p + 4, 4);
    low ^= crc;
    crc = t[7][low & 0xFF] ^ t[6][(low >> 8) & 0xFF] ^ t[5][(low >> 16) & 0xFF] ^ t[4][low >> 24] ^
          t[3][high & 0xFF] ^ t[2][(high >> 8) & 0xFF] ^ t[1][(high >> 16) & 0xFF] ^ t[0][high >> 24];
    p += 8;
    bytes -= 8;
  }
  while (bytes--) crc = (crc >> 8) ^ t[0][(crc ^ *p++) & 0xFF];
  return ~crc;
}

std::vector<unsigned char> encodeCheckpoint(const CheckpointFile& file) {
  MemorySink sink;
  encode(file, sink);
  return std::move(sink.bytes);
}

namespace {

// A file's contents from the first `size` of its `fileSize` bytes: all of it, CRC checked; or, with
// `headerOnly`, the header and the records that lie whole in those bytes.
CheckpointFile decodeCheckpointParts(const unsigned char* data, std::size_t size, std::size_t fileSize,
                                     const std::string& source, bool headerOnly) {
  Source in(data, size, source);
  if (fileSize < kPrefixBytes + 4 || size < kPrefixBytes ||
      std::memcmp(data, kCheckpointMagic, sizeof kCheckpointMagic) != 0)
    in.fail("not an octoflow checkpoint (no OCTOCKPT signature)");
  in.take(sizeof kCheckpointMagic, "signature");
  const auto mark = in.value<std::uint32_t>("byte-order mark");
  if (mark != kByteOrderMark)
    in.fail("written on a machine of the other byte order (byte-order mark " + hex(mark) + ")");
  CheckpointFile file;
  file.header.version = in.value<std::uint32_t>("version");
  if (file.header.version != kCheckpointVersion)
    in.fail("checkpoint format version " + std::to_string(file.header.version) + ", this octoflow reads version " +
            std::to_string(kCheckpointVersion));
  const auto total = in.value<std::uint64_t>("file size");
  if (total != fileSize)
    in.fail("truncated or damaged: " + std::to_string(fileSize) + " bytes, the header says " + std::to_string(total));
  if (!headerOnly) {
    std::uint32_t stored;
    std::memcpy(&stored, data + size - 4, 4);
    const std::uint32_t computed = crc32c(data, size - 4);
    if (stored != computed)
      in.fail("damaged: CRC32C " + hex(computed).substr(8) + " of the contents, " + hex(stored).substr(8) + " recorded");
  }

  CheckpointHeader& h = file.header;
  h.solver = in.text("solver name");
  h.caseName = in.text("case name");
  h.caseHash = in.value<std::uint64_t>("case hash");
  Index extent[3];
  for (Index& n : extent) {
    n = in.value<std::int64_t>("grid size");
    if (n < 1) in.fail("damaged: grid size " + std::to_string(n));
  }
  h.extent = Extent{extent[0], extent[1], extent[2]};
  h.step = in.value<std::int64_t>("step");
  h.time = in.value<double>("time");
  h.rank = in.value<std::int32_t>("rank");
  h.ranks = in.value<std::int32_t>("ranks");
  if (h.step < 0 || h.ranks < 1 || h.rank < 0 || h.rank >= h.ranks)
    in.fail("damaged: step " + std::to_string(h.step) + ", rank " + std::to_string(h.rank) + " of " +
            std::to_string(h.ranks));
  const std::uint32_t records = in.count("records");
  for (std::uint32_t n = 0; n < records; ++n) {
    sim::StateRecord record;
    try {
      record.name = in.text("record name");
      record.bytes = in.blob("record");
    } catch (const InputError&) {
      if (headerOnly && size < fileSize) return file;  // the rest lies beyond the bytes read
      throw;
    }
    file.records.push_back(std::move(record));
  }
  if (headerOnly) return file;
  const std::uint32_t arrays = in.count("arrays");
  for (std::uint32_t n = 0; n < arrays; ++n) {
    sim::StateArray array;
    array.name = in.text("array name");
    array.components = in.value<std::int32_t>("array components");
    array.valueBytes = in.value<std::int32_t>("array value size");
    if (array.components < 1 || array.components > 1024 || array.valueBytes < 1 || array.valueBytes > 1024)
      in.fail("damaged: array '" + array.name + "' of " + std::to_string(array.components) + " components of " +
              std::to_string(array.valueBytes) + " bytes");
    array.box = in.box("array box");
    array.bytes = in.blob("array");
    if (array.bytes.size() != array.expectedBytes())
      in.fail("damaged: array '" + array.name + "' holds " + std::to_string(array.bytes.size()) + " bytes, its box " +
              std::to_string(array.expectedBytes()));
    file.arrays.push_back(std::move(array));
  }
  const std::uint32_t pieces = in.count("pieces");
  for (std::uint32_t n = 0; n < pieces; ++n) {
    CheckpointPieceEntry piece;
    piece.file = in.text("piece file name");
    if (piece.file.empty() || piece.file.find('/') != std::string::npos || piece.file[0] == '.')
      in.fail("damaged: piece file name '" + piece.file + "'");
    piece.box = in.box("piece box");
    piece.bytes = in.value<std::uint64_t>("piece size");
    file.pieces.push_back(std::move(piece));
  }
  if (in.remaining() != 4) in.fail("damaged: " + std::to_string(in.remaining() - 4) + " bytes after the contents");
  return file;
}

}  // namespace

CheckpointFile decodeCheckpoint(const unsigned char* data, std::size_t size, const std::string& source) {
  return decodeCheckpointParts(data, size, size, source, false);
}

CheckpointFile readCheckpointHeader(const std::string& path) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error)) throw InputError(path, "", "checkpoint not found (no such file)");
  const auto fileSize = static_cast<std::size_t>(std::filesystem::file_size(path, error));
  if (error) throw InputError(path, "", "cannot read the checkpoint: " + error.message());
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, "", "cannot open checkpoint: " + std::string(std::strerror(errno)));
  // The header and the case's records (kilobytes) sit at the front: 64 KiB (the whole file when
  // smaller, whose errors are then its own).
  std::vector<unsigned char> bytes(std::min<std::size_t>(fileSize, 64u << 10));
  if (!in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(bytes.size())))
    throw InputError(path, "", "cannot read checkpoint: " + std::string(std::strerror(errno)));
  return decodeCheckpointParts(bytes.data(), bytes.size(), fileSize, path, true);
}

void writeFileAtomically(const std::string& path, const std::function<void(std::FILE*, const std::string&)>& write) {
  const std::string temporary = path + ".partial";
  std::FILE* file = std::fopen(temporary.c_str(), "wb");
  if (!file) throw OutputError(path, std::strerror(errno));
  int error = 0;
  try {
    write(file, path);
    if (std::fflush(file) != 0 || (::fsync(::fileno(file)) != 0 && errno != EINVAL)) error = errno ? errno : EIO;
  } catch (const OutputError&) {
    error = errno ? errno : EIO;
  }
  if (std::fclose(file) != 0 && error == 0) error = errno ? errno : EIO;
  if (error == 0 && std::rename(temporary.c_str(), path.c_str()) != 0) error = errno ? errno : EIO;
  if (error != 0) {
    std::remove(temporary.c_str());
    throw OutputError(path, std::strerror(error));
  }
}

void writeFileAtomically(const std::string& path, const std::vector<unsigned char>& bytes) {
  writeFileAtomically(path, [&](std::FILE* file, const std::string&) {
    if (!bytes.empty() && std::fwrite(bytes.data(), 1, bytes.size(), file) != bytes.size())
      throw OutputError(path, std::strerror(errno));
  });
}

std::uint64_t writeCheckpoint(const std::string& path, const CheckpointFile& contents) {
  std::uint64_t written = 0;
  writeFileAtomically(path, [&](std::FILE* file, const std::string& name) {
    FileSink sink(file, name);
    encode(contents, sink);
    written = sink.size();
  });
  return written;
}

std::string checkpointFileName(const std::string& caseName, Index step) {
  char text[64];
  std::snprintf(text, sizeof text, "_%08lld.ckpt", static_cast<long long>(step));
  return caseName + text;
}

std::string checkpointPieceName(const std::string& caseName, Index step, int rank, int ranks) {
  char text[96];
  std::snprintf(text, sizeof text, "_%08lld.rank%04dof%04d.piece", static_cast<long long>(step), rank, ranks);
  return caseName + text;
}

std::vector<std::string> checkpointFilesOf(const std::string& directory, const std::string& caseName, Index step) {
  std::vector<std::string> files;
  const std::string main = checkpointFileName(caseName, step);
  const std::string prefix = main.substr(0, main.size() - 5) + ".rank";  // "<case>_<step>.rank"
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(directory, error)) {
    const std::string name = entry.path().filename().string();
    if (name == main || (name.rfind(prefix, 0) == 0 && name.size() > 6 && name.substr(name.size() - 6) == ".piece"))
      files.push_back(entry.path().string());
  }
  return files;
}

CheckpointReader::CheckpointReader(const std::string& path) : path_(path) {
  const std::vector<unsigned char> bytes = readWholeFile(path, "checkpoint");
  main_ = decodeCheckpoint(bytes.data(), bytes.size(), path);
  if (main_.header.rank != 0 || (main_.header.ranks > 1 && main_.pieces.empty()))
    throw InputError(path, "", "a piece of a checkpoint of " + std::to_string(main_.header.ranks) +
                                   " ranks: restart from its main file " +
                                   checkpointFileName(main_.header.caseName, main_.header.step));
  if (main_.header.ranks > 1 && main_.pieces.size() != static_cast<std::size_t>(main_.header.ranks))
    throw InputError(path, "", "damaged: lists " + std::to_string(main_.pieces.size()) + " pieces for " +
                                   std::to_string(main_.header.ranks) + " ranks");
}

CheckpointReader::~CheckpointReader() = default;

void CheckpointReader::checkMatches(const std::string& solver, std::uint64_t caseHash, const std::string& caseName,
                                    const Extent& extent) const {
  const CheckpointHeader& h = main_.header;
  if (h.solver != solver)
    throw InputError(path_, "", "a checkpoint of the " + h.solver + " solver, this case runs " + solver);
  if (h.extent.nx != extent.nx || h.extent.ny != extent.ny || h.extent.nz != extent.nz)
    throw InputError(path_, "", "a checkpoint of a " + std::to_string(h.extent.nx) + "x" + std::to_string(h.extent.ny) +
                                    "x" + std::to_string(h.extent.nz) + " grid, this case's domain.size differs");
  if (h.caseHash != caseHash)
    throw InputError(path_, "", "a checkpoint of another case ('" + h.caseName + "', case hash " + hex(h.caseHash) +
                                    "; this case '" + caseName + "' has " + hex(caseHash) +
                                    "): its [domain] or solver tables differ");
}

const std::vector<unsigned char>& CheckpointReader::record(const std::string& name) const {
  for (const sim::StateRecord& r : main_.records)
    if (r.name == name) return r.bytes;
  fail(name, "missing from the checkpoint");
}

bool CheckpointReader::hasRecord(const std::string& name) const {
  for (const sim::StateRecord& r : main_.records)
    if (r.name == name) return true;
  return false;
}

void CheckpointReader::fail(const std::string& name, const std::string& problem) const {
  throw InputError(path_, "", "'" + name + "' " + problem);
}

const CheckpointFile& CheckpointReader::piece(std::size_t index) const {
  auto found = pieces_.find(index);
  if (found != pieces_.end()) return *found->second;
  const CheckpointPieceEntry& entry = main_.pieces[index];
  const std::string path = (std::filesystem::path(path_).parent_path() / entry.file).string();
  const std::vector<unsigned char> bytes = readWholeFile(path, "checkpoint piece (listed in " + path_ + ")");
  if (bytes.size() != entry.bytes)
    throw InputError(path, "", "truncated or replaced: " + std::to_string(bytes.size()) + " bytes, " + path_ + " lists " +
                                   std::to_string(entry.bytes));
  auto file = std::make_unique<CheckpointFile>(decodeCheckpoint(bytes.data(), bytes.size(), path));
  const CheckpointHeader& h = file->header;
  if (h.step != main_.header.step || h.caseHash != main_.header.caseHash || h.ranks != main_.header.ranks ||
      h.rank != static_cast<int>(index))
    throw InputError(path, "", "not piece " + std::to_string(index) + " of " + path_ + " (step " + std::to_string(h.step) +
                                   ", rank " + std::to_string(h.rank) + " of " + std::to_string(h.ranks) + ")");
  return *pieces_.emplace(index, std::move(file)).first->second;
}

namespace {

bool overlap(const NodeBox& a, const NodeBox& b, Index lo[3], Index hi[3]) {
  for (int axis = 0; axis < 3; ++axis) {
    lo[axis] = std::max(a.lo[axis], b.lo[axis]);
    hi[axis] = std::min(a.lo[axis] + a.size.size(axis), b.lo[axis] + b.size.size(axis));
    if (lo[axis] >= hi[axis]) return false;
  }
  return true;
}

// Copies the nodes `from` and `to` share, plane by plane; returns how many nodes a plane.
Index copyOverlap(const sim::StateArray& from, const NodeBox& box, unsigned char* to) {
  Index lo[3], hi[3];
  if (!overlap(from.box, box, lo, hi)) return 0;
  const std::size_t value = static_cast<std::size_t>(from.valueBytes);
  const std::size_t run = static_cast<std::size_t>(hi[0] - lo[0]) * value;
  for (int c = 0; c < from.components; ++c) {
    const unsigned char* source = from.bytes.data() + c * from.planeBytes();
    unsigned char* target = to + c * static_cast<std::size_t>(box.cellCount()) * value;
    for (Index k = lo[2]; k < hi[2]; ++k)
      for (Index j = lo[1]; j < hi[1]; ++j) {
        const Index in = from.box.size.linear(lo[0] - from.box.lo[0], j - from.box.lo[1], k - from.box.lo[2]);
        const Index out = box.size.linear(lo[0] - box.lo[0], j - box.lo[1], k - box.lo[2]);
        std::memcpy(target + out * value, source + in * value, run);
      }
  }
  return (hi[0] - lo[0]) * (hi[1] - lo[1]) * (hi[2] - lo[2]);
}

}  // namespace

void CheckpointReader::readArray(const std::string& name, int components, int valueBytes, const NodeBox& box,
                                 void* destination) const {
  Index covered = 0;
  const auto take = [&](const CheckpointFile& file) {
    for (const sim::StateArray& array : file.arrays) {
      if (array.name != name) continue;
      if (array.components != components || array.valueBytes != valueBytes)
        fail(name, "has " + std::to_string(array.components) + " components of " + std::to_string(array.valueBytes) +
                       " bytes, this run keeps " + std::to_string(components) + " of " + std::to_string(valueBytes) +
                       " (another lattice, storage or model)");
      covered += copyOverlap(array, box, static_cast<unsigned char*>(destination));
    }
  };
  take(main_);
  for (std::size_t n = 0; n < main_.pieces.size(); ++n) {
    Index lo[3], hi[3];
    if (overlap(main_.pieces[n].box, box, lo, hi)) take(piece(n));
  }
  if (covered != box.cellCount())
    fail(name, "covers " + std::to_string(covered) + " of the " + std::to_string(box.cellCount()) +
                   " nodes asked for (missing or overlapping pieces)");
}

}  // namespace octoflow::io
