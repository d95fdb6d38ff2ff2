// libFuzzer target: case-file text (TOML) into io::parseCase. A rejected file must be an
// InputError (the CLI prints it and exits 2); any other exception, a crash, a hang or a sanitizer
// report is a finding. Seeds: fuzz/corpus/case_parser/, dictionary: fuzz/case_parser.dict.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <typeinfo>

#include "common/Error.hpp"
#include "io/CaseFile.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    (void)octoflow::io::parseCase(text, "fuzz.toml");
  } catch (const octoflow::InputError&) {
    // The expected outcome for a bad file.
  } catch (const std::exception& error) {
    std::fprintf(stderr, "parseCase threw %s, not InputError: %s\n", typeid(error).name(), error.what());
    std::abort();
  } catch (...) {
    std::fprintf(stderr, "parseCase threw something that is not a std::exception\n");
    std::abort();
  }
  return 0;
}
