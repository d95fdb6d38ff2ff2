// Bad input as a user meets it, one test a row of tests/data/bad_cases/cases.txt: broken case files
// of both solvers, broken STL files, bad flags and paths. Every row must end with its exit code and
// exactly one line "octoflow: error: ..." naming the key, file or flag; nothing may crash, report a
// fault ("failed:", exit 1) or be left behind.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "TestSupport.hpp"

namespace fs = std::filesystem;

namespace {

const fs::path kFolder = fs::path(OCTOFLOW_SOURCE_DIR) / "tests" / "data" / "bad_cases";
const fs::path kTable = kFolder / "cases.txt";
// A bad input is rejected while parsing, in milliseconds; a row that starts a run that does not
// end must fail, not hang the suite.
constexpr int kTimeoutSeconds = 120;

struct BadInput {
  int line = 0;
  std::set<std::string> flags;  // nogpu (cases.txt's header says what it means)
  int exitCode = 0;
  std::string mustMention;
  std::string arguments;  // with {dir} (the bad_cases folder) and {tmp} (an empty folder, the working directory)
  std::string name;       // the test's name: the line and what the row runs
};

void PrintTo(const BadInput& row, std::ostream* out) { *out << "cases.txt:" << row.line << ": " << row.arguments; }

std::string trimmed(const std::string& text) {
  const auto first = text.find_first_not_of(" \t\r");
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(" \t\r") - first + 1);
}

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::istringstream stream(text);
  for (std::string part; std::getline(stream, part, separator);) parts.push_back(trimmed(part));
  return parts;
}

// "L<line>_<what it runs>", letters, digits and '_' only: "run {dir}/lbm_tau_below_half.toml
// --output {tmp}/out" on line 23 is L23_run_lbm_tau_below_half.
std::string testName(int line, std::string arguments) {
  for (const char* noise : {" --output {tmp}/out", "{dir}/", "{tmp}/", ".toml"}) {
    for (auto at = arguments.find(noise); at != std::string::npos; at = arguments.find(noise))
      arguments.erase(at, std::string(noise).size());
  }
  std::string name = "L" + std::to_string(line) + "_";
  for (const char c : arguments) {
    const bool word = std::isalnum(static_cast<unsigned char>(c)) != 0;
    if (word)
      name += c;
    else if (name.back() != '_')
      name += '_';
  }
  while (name.back() == '_') name.pop_back();
  return name.substr(0, 90);
}

// The rows of cases.txt, and a description of each line that is not a row or a comment.
struct Table {
  std::vector<BadInput> rows;
  std::vector<std::string> problems;
};

Table readTable() {
  Table table;
  std::ifstream file(kTable);
  if (!file) {
    table.problems.push_back(kTable.string() + " cannot be read");
    return table;
  }
  int number = 0;
  for (std::string text; std::getline(file, text);) {
    ++number;
    text = trimmed(text);
    if (text.empty() || text[0] == '#') continue;
    std::vector<std::string> fields = split(text, '|');
    BadInput row;
    row.line = number;
    if (fields.size() == 4) {
      for (const std::string& flag : split(fields.front(), ',')) row.flags.insert(flag);
      fields.erase(fields.begin());
    }
    const std::string where = "cases.txt:" + std::to_string(number) + ": ";
    if (fields.size() != 3) {
      table.problems.push_back(where + "expected [flags |] code | text | arguments");
      continue;
    }
    for (const std::string& flag : row.flags)
      if (flag != "nogpu") table.problems.push_back(where + "unknown flag '" + flag + "'");
    try {
      row.exitCode = std::stoi(fields[0]);
    } catch (const std::exception&) {
      table.problems.push_back(where + "the exit code '" + fields[0] + "' is not a number");
      continue;
    }
    row.mustMention = fields[1];
    row.arguments = fields[2];
    if (row.mustMention.empty() || row.arguments.empty()) {
      table.problems.push_back(where + "empty text or arguments");
      continue;
    }
    row.name = testName(number, row.arguments);
    table.rows.push_back(row);
  }
  return table;
}

std::vector<BadInput> tableRows() { return readTable().rows; }

// Every occurrence of `from` in `text` replaced by `to`.
std::string substituted(std::string text, const std::string& from, const std::string& to) {
  for (auto at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

std::string contents(const fs::path& path) {
  std::ifstream file(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(file), {});
}

// The files of bad_cases/ a row names through {dir}/<name>.
std::vector<std::string> namedFiles(const std::string& arguments) {
  std::vector<std::string> names;
  const std::string marker = "{dir}/";
  for (auto at = arguments.find(marker); at != std::string::npos; at = arguments.find(marker, at + 1)) {
    const auto begin = at + marker.size();
    const auto end = arguments.find_first_of(" /", begin);
    names.push_back(arguments.substr(begin, end == std::string::npos ? std::string::npos : end - begin));
  }
  return names;
}

class BadInputTest : public octoflow::testing::ScratchFolderTest,
                     public ::testing::WithParamInterface<BadInput> {};

}  // namespace

TEST_P(BadInputTest, ExitsWithItsCodeAndOneLineNamingTheCulprit) {
  const BadInput& row = GetParam();
  if (row.flags.count("nogpu")) {
    std::string whyNone;
    if (!octoflow::exec::cudaDevices(&whyNone).empty())
      GTEST_SKIP() << "not applicable: this row holds only where no CUDA device is usable, and one is";
  }
  // {tmp} is the working directory: a case's default output folder out/<name> lands in it too.
  const fs::path tmp = directory_ / "tmp";
  fs::create_directories(tmp);
  const fs::path errors = directory_ / "stderr.txt";
  const std::string arguments =
      substituted(substituted(row.arguments, "{dir}", "'" + kFolder.string() + "'"), "{tmp}", "'" + tmp.string() + "'");
  // stderr alone into a file (the helper joins stdout to what is left).
  const octoflow::testing::CommandResult result = octoflow::testing::runCommand(
      "{ timeout -k 5 " + std::to_string(kTimeoutSeconds) + " '" + std::string(OCTOFLOW_CLI_PATH) + "' " + arguments +
          " 2>'" + errors.string() + "'; }",
      tmp);
  const std::string stderrText = contents(errors);
  const std::string context = "octoflow " + arguments + "\nstdout:\n" + result.output + "stderr:\n" + stderrText;

  ASSERT_NE(result.exitCode, 124) << "did not end within " << kTimeoutSeconds << " s\n" << context;
  ASSERT_TRUE(result.exitCode >= 0 && result.exitCode < 128) << "crashed (killed by a signal)\n" << context;
  EXPECT_NE(result.exitCode, 1) << "reported a fault of the program, not bad input\n" << context;
  EXPECT_EQ(stderrText.find("octoflow: failed:"), std::string::npos) << context;
  EXPECT_EQ(result.exitCode, row.exitCode) << context;
  // Nothing half-written: no output folder, nothing at all in the working directory.
  EXPECT_FALSE(fs::exists(tmp / "out")) << "an output folder was created\n" << context;
  std::vector<std::string> left;
  for (const auto& entry : fs::directory_iterator(tmp)) left.push_back(entry.path().filename().string());
  EXPECT_TRUE(left.empty()) << "left behind: " << left.front() << "\n" << context;

  std::vector<std::string> errorLines;
  std::istringstream lines(stderrText);
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("octoflow: error:", 0) == 0) errorLines.push_back(line);
  ASSERT_EQ(errorLines.size(), 1u) << "expected exactly one line starting 'octoflow: error:'\n" << context;
  EXPECT_NE(errorLines.front().find(row.mustMention), std::string::npos)
      << "the message does not name '" << row.mustMention << "'\n" << context;
}

INSTANTIATE_TEST_SUITE_P(Table, BadInputTest, ::testing::ValuesIn(tableRows()),
                         [](const ::testing::TestParamInfo<BadInput>& info) { return info.param.name; });

// The table itself: well formed, long enough, naming only files that exist (a misspelt name would
// fail for the wrong reason), and using every file of the folder (directly or, for STL files,
// through a case file a row runs).
TEST(BadInputTable, HasEnoughRowsAndUsesEveryFile) {
  const Table table = readTable();
  for (const std::string& problem : table.problems) ADD_FAILURE() << problem;
  EXPECT_GE(table.rows.size(), 40u);

  std::set<std::string> names;
  std::string mentions;
  for (const BadInput& row : table.rows) {
    EXPECT_TRUE(names.insert(row.name).second) << "two rows named " << row.name;
    mentions += row.arguments + "\n";
    for (const std::string& file : namedFiles(row.arguments)) {
      EXPECT_TRUE(file.empty() || fs::exists(kFolder / file)) << "cases.txt:" << row.line << " names " << file
                                                              << ", which is not in " << kFolder;
      if (!file.empty() && fs::path(file).extension() == ".toml") mentions += contents(kFolder / file);
    }
  }
  for (const auto& entry : fs::directory_iterator(kFolder)) {
    const std::string file = entry.path().filename().string();
    if (file == kTable.filename()) continue;
    EXPECT_NE(mentions.find(file), std::string::npos) << file << " is used by no row of cases.txt";
  }
}

// Both solvers are covered, as `run` and as `validate`.
TEST(BadInputTable, CoversBothSolversAndBothCommands) {
  int lbm = 0, phaseField = 0, run = 0, validate = 0;
  for (const BadInput& row : readTable().rows) {
    for (const std::string& file : namedFiles(row.arguments)) {
      const std::string text = contents(kFolder / file);
      if (text.find("solver = \"lbm\"") != std::string::npos) ++lbm;
      if (text.find("solver = \"phasefield\"") != std::string::npos) ++phaseField;
    }
    if (row.arguments.rfind("run", 0) == 0) ++run;
    if (row.arguments.rfind("validate", 0) == 0) ++validate;
  }
  EXPECT_GE(lbm, 20);
  EXPECT_GE(phaseField, 20);
  EXPECT_GE(run, 20);
  EXPECT_GE(validate, 20);
}
