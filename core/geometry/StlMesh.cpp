#include "geometry/StlMesh.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <system_error>
#include <unordered_map>
#include <utility>

#include "common/Error.hpp"

namespace octoflow::geometry {
namespace {

// Binary STL: an 80-byte header, a little-endian uint32 triangle count, then 50 bytes per
// triangle (normal, three vertices as 12 little-endian float32, a 16-bit attribute word).
constexpr std::size_t kBinaryHeaderBytes = 80;
constexpr std::size_t kBinaryPreambleBytes = kBinaryHeaderBytes + 4;
constexpr std::size_t kBinaryTriangleBytes = 50;

std::uint32_t readUint32LittleEndian(const unsigned char* bytes) {
  return static_cast<std::uint32_t>(bytes[0]) | (static_cast<std::uint32_t>(bytes[1]) << 8) |
         (static_cast<std::uint32_t>(bytes[2]) << 16) | (static_cast<std::uint32_t>(bytes[3]) << 24);
}

// Decoded byte by byte so that the result does not depend on the host's byte order.
float readFloatLittleEndian(const unsigned char* bytes) {
  const std::uint32_t bits = readUint32LittleEndian(bytes);
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

void writeUint32LittleEndian(std::uint32_t value, char* bytes) {
  for (int shift = 0; shift < 4; ++shift) bytes[shift] = static_cast<char>((value >> (8 * shift)) & 0xFFu);
}

void writeFloatLittleEndian(float value, char* bytes) {
  std::uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  writeUint32LittleEndian(bits, bytes);
}

bool startsWithSolid(const std::string& content) {
  std::size_t at = 0;
  while (at < content.size() && std::isspace(static_cast<unsigned char>(content[at]))) ++at;
  return content.compare(at, 5, "solid") == 0;
}

// Binary files written by some exporters also begin with "solid"; a byte that no text file holds
// (NUL or another control character) tells such a file from an ASCII one, so that a truncated
// binary file is reported as truncated and not as a syntax error.
bool looksLikeText(const std::string& content) {
  for (const char c : content) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 && byte != '\t' && byte != '\n' && byte != '\r' && byte != '\f' && byte != '\v') return false;
  }
  return true;
}

std::string describeSize(std::size_t bytes) { return std::to_string(bytes) + " bytes"; }

std::vector<Triangle> parseBinary(const std::string& path, const std::string& content, std::uint32_t count) {
  std::vector<Triangle> triangles(count);
  const auto* bytes = reinterpret_cast<const unsigned char*>(content.data()) + kBinaryPreambleBytes;
  for (std::uint32_t t = 0; t < count; ++t, bytes += kBinaryTriangleBytes) {
    // The stored normal is skipped: it is often wrong or zero, and nothing here needs it.
    for (int v = 0; v < 3; ++v) {
      for (int axis = 0; axis < 3; ++axis) {
        const double value = readFloatLittleEndian(bytes + 12 + 12 * v + 4 * axis);
        if (!std::isfinite(value))
          throw InputError(path, "", "triangle " + std::to_string(t) + " has a non-finite coordinate");
        triangles[t].vertices[v][axis] = value;
      }
    }
  }
  return triangles;
}

// ASCII STL, read token by token so that any line layout is accepted:
//   solid [name]
//     facet normal nx ny nz
//       outer loop
//         vertex x y z   (three times)
//       endloop
//     endfacet
//   endsolid [name]
// Several solids in one file are read into one mesh. Keywords are matched without case.
class AsciiParser {
public:
  AsciiParser(const std::string& path, const std::string& content) : path_(path), content_(content) {}

  std::vector<Triangle> parse() {
    std::vector<Triangle> triangles;
    expectKeyword("solid");
    skipRestOfLine();  // the solid's name, possibly empty or several words
    while (true) {
      const std::string word = nextToken();
      if (word.empty()) fail("unexpected end of file, expected 'facet' or 'endsolid'");
      if (equalsKeyword(word, "endsolid")) {
        skipRestOfLine();
        const std::string after = nextToken();
        if (after.empty()) break;
        if (!equalsKeyword(after, "solid")) fail("expected 'solid' or the end of the file after 'endsolid', found '" + after + "'");
        skipRestOfLine();
        continue;
      }
      if (!equalsKeyword(word, "facet")) fail("expected 'facet' or 'endsolid', found '" + word + "'");
      expectKeyword("normal");
      for (int axis = 0; axis < 3; ++axis) readNumber("normal component");
      expectKeyword("outer");
      expectKeyword("loop");
      Triangle triangle;
      for (int v = 0; v < 3; ++v) {
        expectKeyword("vertex");
        for (int axis = 0; axis < 3; ++axis) {
          const double value = readNumber("vertex coordinate");
          if (!std::isfinite(value)) fail("non-finite vertex coordinate '" + token_ + "'");
          triangle.vertices[v][axis] = value;
        }
      }
      expectKeyword("endloop");
      expectKeyword("endfacet");
      triangles.push_back(triangle);
    }
    return triangles;
  }

private:
  static bool equalsKeyword(const std::string& word, const char* keyword) {
    const std::size_t length = std::strlen(keyword);
    if (word.size() != length) return false;
    for (std::size_t i = 0; i < length; ++i)
      if (std::tolower(static_cast<unsigned char>(word[i])) != keyword[i]) return false;
    return true;
  }

  // The next whitespace-separated token ("" at the end of the file); line_ is the token's line.
  std::string nextToken() {
    while (at_ < content_.size() && std::isspace(static_cast<unsigned char>(content_[at_]))) {
      if (content_[at_] == '\n') ++line_;
      ++at_;
    }
    const std::size_t begin = at_;
    while (at_ < content_.size() && !std::isspace(static_cast<unsigned char>(content_[at_]))) ++at_;
    token_ = content_.substr(begin, at_ - begin);
    return token_;
  }

  void skipRestOfLine() {
    while (at_ < content_.size() && content_[at_] != '\n') ++at_;
  }

  void expectKeyword(const char* keyword) {
    const std::string word = nextToken();
    if (word.empty()) fail(std::string("unexpected end of file, expected '") + keyword + "'");
    if (!equalsKeyword(word, keyword)) fail(std::string("expected '") + keyword + "', found '" + word + "'");
  }

  // std::from_chars: independent of the C locale (a decimal comma locale would break strtod).
  double readNumber(const char* what) {
    const std::string word = nextToken();
    if (word.empty()) fail(std::string("unexpected end of file, expected a ") + what);
    const char* begin = word.data();
    const char* end = word.data() + word.size();
    if (begin != end && *begin == '+') ++begin;  // from_chars rejects a leading '+', STL writers may not
    double value = 0.0;
    const auto [stop, error] = std::from_chars(begin, end, value);
    if (error == std::errc::result_out_of_range) fail(std::string(what) + " '" + word + "' is out of range");
    if (error != std::errc() || stop != end) fail(std::string("expected a ") + what + ", found '" + word + "'");
    return value;
  }

  [[noreturn]] void fail(const std::string& problem) const {
    throw InputError(path_, "", "line " + std::to_string(line_) + ": " + problem);
  }

  const std::string& path_;
  const std::string& content_;
  std::size_t at_ = 0;
  std::size_t line_ = 1;
  std::string token_;
};

std::string readWholeFile(const std::string& path) {
  std::error_code error;
  const auto status = std::filesystem::status(path, error);
  if (!std::filesystem::exists(status)) throw InputError(path, "", "file not found");
  if (std::filesystem::is_directory(status)) throw InputError(path, "", "is a directory, expected an STL file");
  std::ifstream stream(path, std::ios::binary);
  if (!stream) throw InputError(path, "", "cannot open file: " + std::string(std::strerror(errno)));
  std::string content((std::istreambuf_iterator<char>(stream)), std::istreambuf_iterator<char>());
  if (stream.bad()) throw InputError(path, "", "read error");
  return content;
}

std::array<double, 3> subtract(const std::array<double, 3>& a, const std::array<double, 3>& b) {
  return {a[0] - b[0], a[1] - b[1], a[2] - b[2]};
}

std::array<double, 3> cross(const std::array<double, 3>& a, const std::array<double, 3>& b) {
  return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}

double dot(const std::array<double, 3>& a, const std::array<double, 3>& b) {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

}  // namespace

StlMesh StlMesh::load(const std::string& path) {
  const std::string content = readWholeFile(path);
  StlMesh mesh;
  // The size rule decides first: a binary file whose header happens to begin with "solid" is
  // still binary when its size matches 84 + 50 n exactly.
  if (content.size() >= kBinaryPreambleBytes) {
    const std::uint32_t count =
        readUint32LittleEndian(reinterpret_cast<const unsigned char*>(content.data()) + kBinaryHeaderBytes);
    const std::uint64_t expected = kBinaryPreambleBytes + std::uint64_t{kBinaryTriangleBytes} * count;
    if (expected == content.size()) {
      mesh.triangles_ = parseBinary(path, content, count);
    } else if (startsWithSolid(content) && looksLikeText(content)) {
      mesh.triangles_ = AsciiParser(path, content).parse();
    } else {
      throw InputError(path, "", "truncated or corrupt binary STL: the header announces " + std::to_string(count) +
                                     " triangles, which need " + describeSize(expected) + " (84 + 50 n), but the file has " +
                                     describeSize(content.size()));
    }
  } else if (startsWithSolid(content) && looksLikeText(content)) {
    mesh.triangles_ = AsciiParser(path, content).parse();
  } else {
    throw InputError(path, "", "not an STL file: " + describeSize(content.size()) +
                                   ", shorter than a binary STL's 84-byte preamble, and not ASCII (does not start with 'solid')");
  }
  if (mesh.triangles_.empty()) throw InputError(path, "", "the STL file holds no triangles");
  return mesh;
}

void StlMesh::saveBinary(const std::string& path) const {
  if (triangles_.size() > std::numeric_limits<std::uint32_t>::max())
    throw Error(path + ": too many triangles for a binary STL (" + std::to_string(triangles_.size()) + ")");
  std::string bytes(kBinaryPreambleBytes + kBinaryTriangleBytes * triangles_.size(), '\0');
  // The header must not begin with "solid", or weaker readers take the file for ASCII.
  const char header[] = "octoflow binary STL";
  std::memcpy(bytes.data(), header, sizeof header - 1);
  writeUint32LittleEndian(static_cast<std::uint32_t>(triangles_.size()), bytes.data() + kBinaryHeaderBytes);
  char* record = bytes.data() + kBinaryPreambleBytes;
  for (const Triangle& triangle : triangles_) {
    const auto& v = triangle.vertices;
    std::array<double, 3> normal = cross(subtract(v[1], v[0]), subtract(v[2], v[0]));
    const double length = std::sqrt(dot(normal, normal));
    for (double& component : normal) component = length > 0.0 ? component / length : 0.0;
    for (int axis = 0; axis < 3; ++axis) writeFloatLittleEndian(static_cast<float>(normal[axis]), record + 4 * axis);
    for (int vertex = 0; vertex < 3; ++vertex)
      for (int axis = 0; axis < 3; ++axis)
        writeFloatLittleEndian(static_cast<float>(v[vertex][axis]), record + 12 + 12 * vertex + 4 * axis);
    record += kBinaryTriangleBytes;  // the attribute word stays 0
  }
  // Written under a temporary name and renamed when complete: a reader never sees half a file.
  const std::string temporary = path + ".partial";
  {
    std::ofstream stream(temporary, std::ios::binary | std::ios::trunc);
    if (!stream) throw Error(path + ": cannot write STL file: " + std::strerror(errno));
    stream.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    stream.close();
    if (!stream) {
      std::error_code ignored;
      std::filesystem::remove(temporary, ignored);
      throw Error(path + ": cannot write STL file");
    }
  }
  std::error_code error;
  std::filesystem::rename(temporary, path, error);
  if (error) {
    std::error_code ignored;
    std::filesystem::remove(temporary, ignored);
    throw Error(path + ": cannot write STL file: " + error.message());
  }
}

void StlMesh::bounds(std::array<double, 3>& lower, std::array<double, 3>& upper) const {
  // An empty mesh gives lower > upper: an empty box.
  lower.fill(std::numeric_limits<double>::infinity());
  upper.fill(-std::numeric_limits<double>::infinity());
  for (const Triangle& triangle : triangles_) {
    for (const auto& vertex : triangle.vertices) {
      for (int axis = 0; axis < 3; ++axis) {
        lower[axis] = std::min(lower[axis], vertex[axis]);
        upper[axis] = std::max(upper[axis], vertex[axis]);
      }
    }
  }
}

bool StlMesh::isWatertight() const { return detail::openEdgeCount(triangles_) == 0; }

double StlMesh::volume() const {
  if (triangles_.empty()) return 0.0;
  // Divergence theorem: V = sum over triangles of v0 . (v1 x v2) / 6 (the signed volumes of the
  // tetrahedra from a reference point to each face). The reference point is the bounds' centre
  // instead of the origin, so that a mesh far from the origin loses no digits to cancellation.
  std::array<double, 3> lower;
  std::array<double, 3> upper;
  bounds(lower, upper);
  const std::array<double, 3> reference{0.5 * (lower[0] + upper[0]), 0.5 * (lower[1] + upper[1]),
                                        0.5 * (lower[2] + upper[2])};
  double sum = 0.0;
  for (const Triangle& triangle : triangles_) {
    const auto a = subtract(triangle.vertices[0], reference);
    const auto b = subtract(triangle.vertices[1], reference);
    const auto c = subtract(triangle.vertices[2], reference);
    sum += dot(a, cross(b, c));
  }
  return sum / 6.0;
}

namespace detail {

std::size_t openEdgeCount(const std::vector<Triangle>& triangles) {
  // Vertices are matched exactly (no tolerance), as the header promises: numbered through a
  // hash of their bit patterns, then every edge becomes a sorted pair of numbers.
  struct VertexHash {
    std::size_t operator()(const std::array<double, 3>& v) const {
      std::size_t hash = 1469598103934665603ull;
      for (const double component : v) {
        std::uint64_t bits;
        std::memcpy(&bits, &component, sizeof bits);
        hash = (hash ^ bits) * 1099511628211ull;
      }
      return hash;
    }
  };
  std::unordered_map<std::array<double, 3>, std::uint32_t, VertexHash> numbers;
  numbers.reserve(triangles.size() * 3);
  std::vector<std::pair<std::uint32_t, std::uint32_t>> edges;
  edges.reserve(triangles.size() * 3);
  for (const Triangle& triangle : triangles) {
    std::uint32_t ids[3];
    for (int v = 0; v < 3; ++v) {
      std::array<double, 3> key = triangle.vertices[v];
      for (double& component : key) component += 0.0;  // -0.0 + 0.0 == +0.0: one key for both zeros
      ids[v] = numbers.emplace(key, static_cast<std::uint32_t>(numbers.size())).first->second;
    }
    for (int e = 0; e < 3; ++e) {
      const std::uint32_t a = ids[e];
      const std::uint32_t b = ids[(e + 1) % 3];
      edges.emplace_back(std::min(a, b), std::max(a, b));
    }
  }
  std::sort(edges.begin(), edges.end());
  std::size_t open = 0;
  for (std::size_t first = 0; first < edges.size();) {
    std::size_t last = first;
    while (last < edges.size() && edges[last] == edges[first]) ++last;
    if (last - first != 2) ++open;
    first = last;
  }
  return open;
}

}  // namespace detail
}  // namespace octoflow::geometry
