// libFuzzer target: checkpoint file bytes into io::decodeCheckpoint. A defective file must be an
// InputError naming the file; any other exception, a crash, a hang or a sanitizer report is a
// finding. Seeds: fuzz/corpus/checkpoint/ (real files from make_checkpoint_seeds).
//
// Each input is decoded twice: as it is (so the magic, size and CRC checks are exercised), and with
// its trailing CRC32C recomputed, so that mutations reach the header, records, arrays and piece
// list behind the checksum instead of all stopping at it.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <typeinfo>
#include <vector>

#include "common/Error.hpp"
#include "io/Checkpoint.hpp"

namespace {

void decode(const unsigned char* data, std::size_t size, const char* what) {
  try {
    (void)octoflow::io::decodeCheckpoint(data, size, "fuzz.ckpt");
  } catch (const octoflow::InputError&) {
    // The expected outcome for a defective file.
  } catch (const std::exception& error) {
    std::fprintf(stderr, "decodeCheckpoint (%s) threw %s, not InputError: %s\n", what, typeid(error).name(),
                 error.what());
    std::abort();
  } catch (...) {
    std::fprintf(stderr, "decodeCheckpoint (%s) threw something that is not a std::exception\n", what);
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // A copy of exactly `size` bytes on the heap: a read past the end is an ASan report.
  std::vector<unsigned char> bytes(data, data + size);
  decode(bytes.data(), bytes.size(), "as given");
  if (bytes.size() >= sizeof(std::uint32_t)) {
    const std::size_t body = bytes.size() - sizeof(std::uint32_t);
    const std::uint32_t crc = octoflow::io::crc32c(bytes.data(), body);
    if (std::memcmp(bytes.data() + body, &crc, sizeof crc) != 0) {
      std::memcpy(bytes.data() + body, &crc, sizeof crc);
      decode(bytes.data(), bytes.size(), "checksum recomputed");
    }
  }
  return 0;
}
