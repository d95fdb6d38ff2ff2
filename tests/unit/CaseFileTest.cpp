// Case files: what a good file yields, and that every class of bad input names its key.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "TestSupport.hpp"
#include "common/Error.hpp"
#include "io/CaseFile.hpp"
#include "lbm/LbmCase.hpp"

using namespace octoflow;
using octoflow::testing::replaced;

namespace {
const std::string kValidCase = R"(
[case]
name = "channel"
solver = "lbm"
steps = 100
[lbm]
lattice = "D2Q9"
collision = "bgk"
tau = 0.8
body_force = [1e-6, 0.0]
[domain]
size = [64, 32]
periodic = [true, false]
[[boundary]]
faces = ["y-", "y+"]
type = "wall"
[[boundary]]
faces = ["y+"]
type = "moving_wall"
velocity = [0.1, 0.0]
[output]
directory = "out/channel"
every = 10
fields = ["velocity"]
)";

}  // namespace

TEST(CaseFile, ParsesEveryDocumentedKey) {
  const io::CaseDescription d = io::parseCase(kValidCase, "channel.toml");
  EXPECT_EQ(d.name, "channel");
  EXPECT_EQ(d.steps, 100);
  EXPECT_EQ(lbm::lbmCaseOf(d).config.lattice, lbm::LatticeKind::D2Q9);
  EXPECT_FLOAT_EQ(lbm::lbmCaseOf(d).config.tau, 0.8f);
  EXPECT_FLOAT_EQ(lbm::lbmCaseOf(d).config.acceleration.x, 1e-6f);
  EXPECT_EQ(lbm::lbmCaseOf(d).config.extent.nx, 64);
  EXPECT_EQ(lbm::lbmCaseOf(d).config.extent.ny, 32);
  EXPECT_EQ(lbm::lbmCaseOf(d).config.extent.nz, 1);
  EXPECT_EQ(lbm::lbmCaseOf(d).config.faces.face[0].type, lbm::FaceType::Periodic);
  EXPECT_EQ(lbm::lbmCaseOf(d).config.faces.face[2].type, lbm::FaceType::Wall);
  // The later entry on y+ replaces the earlier wall.
  EXPECT_EQ(lbm::lbmCaseOf(d).config.faces.face[3].type, lbm::FaceType::MovingWall);
  EXPECT_FLOAT_EQ(lbm::lbmCaseOf(d).config.faces.face[3].velocity.x, 0.1f);
  EXPECT_EQ(d.output.directory, "out/channel");
  EXPECT_EQ(d.output.every, 10);
  EXPECT_TRUE(d.output.wants("velocity"));
  EXPECT_FALSE(d.output.wants("density"));
}

TEST(CaseFile, InSituScriptErrorsStopUnlessToldToContinue) {
  EXPECT_FALSE(io::parseCase(kValidCase, "c.toml").insitu.continueOnError);
  const auto d = io::parseCase(replaced(kValidCase, "[output]", "[insitu]\non_error = \"continue\"\n[output]"), "c.toml");
  EXPECT_TRUE(d.insitu.continueOnError);
}

TEST(CaseFile, ViscosityIsAnAlternativeToTau) {
  const auto d = io::parseCase(replaced(kValidCase, "tau = 0.8", "viscosity = 0.1"), "c.toml");
  EXPECT_NEAR(lbm::lbmCaseOf(d).config.tau, 0.8f, 1e-6f);
}

// A 3D case with tracers and a surface (the surface needs 3D).
const std::string kTracerCase = R"(
[case]
name = "wake"
steps = 100
[lbm]
lattice = "D3Q19"
tau = 0.6
[domain]
size = [40, 20, 20]
[output]
every = 50
[tracers]
max_particles = 5000
integrator = "rk4"
substeps = 2
every = 2
[[tracers.source]]
type = "point"
at = [1, 2, 3]
[[tracers.source]]
type = "line"
from = [2, 2, 9.5]
to = [2, 17, 9.5]
count = 16
release_every = 10
[[tracers.source]]
type = "plane"
corner = [1, 3, 3]
edge1 = [0, 14, 0]
edge2 = [0, 0, 14]
count = [4, 5]
[[tracers.source]]
type = "box"
min = [30, 2, 2]
max = [39, 19, 19]
count = [2, 3, 4]
[surface]
field = "speed"
level = 0.03
output_every = 25
)";

TEST(CaseFile, TracerSourcesAndTheSurfaceAreRead) {
  const io::CaseDescription d = io::parseCase(kTracerCase, "wake.toml");
  const auto& tracers = d.tracers;
  ASSERT_TRUE(tracers.enabled());
  EXPECT_EQ(tracers.particles.maxParticles, 5000);
  EXPECT_EQ(tracers.particles.integrator, particles::Integrator::Rk4);
  EXPECT_EQ(tracers.particles.substeps, 2);
  EXPECT_EQ(tracers.every, 2);
  EXPECT_EQ(tracers.outputEvery, 50);  // output.every unless given
  ASSERT_EQ(tracers.particles.sources.size(), 4u);
  const auto& point = tracers.particles.sources[0];
  EXPECT_EQ(point.shape, particles::TracerSource::Shape::Point);
  EXPECT_EQ(point.perRelease(), 1);
  EXPECT_EQ(point.releaseEvery, 0);  // once, at step 0
  EXPECT_FLOAT_EQ(point.origin[2], 3.0f);
  const auto& line = tracers.particles.sources[1];
  EXPECT_EQ(line.shape, particles::TracerSource::Shape::Line);
  EXPECT_EQ(line.perRelease(), 16);
  EXPECT_EQ(line.releaseEvery, 10);
  EXPECT_FLOAT_EQ(line.end[1], 17.0f);
  EXPECT_EQ(tracers.particles.sources[2].shape, particles::TracerSource::Shape::Plane);
  EXPECT_EQ(tracers.particles.sources[2].perRelease(), 20);
  EXPECT_FLOAT_EQ(tracers.particles.sources[2].edge2[2], 14.0f);
  EXPECT_EQ(tracers.particles.sources[3].shape, particles::TracerSource::Shape::Box);
  EXPECT_EQ(tracers.particles.sources[3].perRelease(), 24);
  EXPECT_EQ(d.surface.field, "speed");
  EXPECT_FLOAT_EQ(d.surface.level, 0.03f);
  EXPECT_EQ(d.surface.outputEvery, 25);
  // Defaults: RK2, one sub-step, moved every step, 100000 at most.
  const auto plain = io::parseCase(replaced(replaced(replaced(replaced(kTracerCase, "max_particles = 5000\n", ""),
                                                               "integrator = \"rk4\"\n", ""),
                                                      "substeps = 2\n", ""),
                                             "every = 2\n", ""),
                                    "wake.toml");
  EXPECT_EQ(plain.tracers.particles.maxParticles, 100000);
  EXPECT_EQ(plain.tracers.particles.integrator, particles::Integrator::Rk2);
  EXPECT_EQ(plain.tracers.particles.substeps, 1);
  EXPECT_EQ(plain.tracers.every, 1);
  EXPECT_FALSE(io::parseCase(kValidCase, "c.toml").tracers.enabled());
  EXPECT_FALSE(io::parseCase(kValidCase, "c.toml").surface.enabled());
}

TEST(CaseFile, BadTracersAndSurfacesNameTheirKey) {
  const struct {
    const char* from;
    const char* to;
    const char* key;
  } classes[] = {
      {"type = \"point\"", "type = \"disc\"", "tracers.source[0].type"},
      {"at = [1, 2, 3]", "at = [1, 2, 30]", "tracers.source[0].at"},                  // outside the domain
      {"at = [1, 2, 3]", "at = [1, 2]", "tracers.source[0].at"},                      // 2 coordinates in 3D
      {"at = [1, 2, 3]", "where = [1, 2, 3]", "tracers.source[0].where"},             // unknown key
      {"count = 16\n", "", "tracers.source[1].count"},                                // line without count
      {"count = 16", "count = 0", "tracers.source[1].count"},
      {"release_every = 10", "release_every = 3", "tracers.source[1].release_every"},  // not a multiple of every
      {"release_every = 10", "release_every = -2", "tracers.source[1].release_every"},
      {"edge2 = [0, 0, 14]", "edge2 = [0, 0, 18]", "tracers.source[2].edge2"},        // plane leaves the domain
      {"count = [4, 5]", "count = 4", "tracers.source[2].count"},
      {"count = [2, 3, 4]", "count = [2, 3]", "tracers.source[3].count"},
      {"count = [2, 3, 4]", "count = [100, 100, 100]", "tracers.source[3].count"},    // over max_particles
      {"max = [39, 19, 19]", "max = [20, 1, 19]", "tracers.source[3].max"},           // max < min
      {"integrator = \"rk4\"", "integrator = \"euler\"", "tracers.integrator"},
      {"substeps = 2", "substeps = 0", "tracers.substeps"},
      {"substeps = 2", "substeps = 2147483648", "tracers.substeps"},                  // not narrowed to int
      {"count = 16", "count = 4294967297", "tracers.source[1].count"},
      {"max_particles = 5000", "max_particles = 1000000000", "tracers.max_particles"},
      {"max_particles = 5000", "max_particles = -1", "tracers.max_particles"},
      {"every = 2\n[[tracers", "every = 2\nspeed = 1\n[[tracers", "tracers.speed"},
      {"field = \"speed\"", "field = \"vorticity\"", "surface.field"},
      {"level = 0.03\n", "", "surface.level"},
      {"output_every = 25", "output_every = -1", "surface.output_every"},
      {"name = \"wake\"", "name = \"tracers\"", "case.name"},                         // the tracers' own series
  };
  for (const auto& bad : classes) {
    try {
      io::parseCase(replaced(kTracerCase, bad.from, bad.to), "bad.toml");
      ADD_FAILURE() << bad.key << ": accepted";
    } catch (const InputError& error) {
      const std::string message = error.what();
      EXPECT_NE(message.find("bad.toml"), std::string::npos) << message;
      EXPECT_NE(message.find(bad.key), std::string::npos) << bad.key << ": " << message;
    }
  }
  // 2D: no plane sources, no surface.
  EXPECT_THROW(io::parseCase(replaced(kValidCase, "[output]",
                                      "[tracers]\n[[tracers.source]]\ntype = \"plane\"\ncorner = [1, 1]\n"
                                      "edge1 = [0, 4]\nedge2 = [4, 0]\ncount = [2, 2]\n[output]"),
                             "c.toml"),
               InputError);
  EXPECT_THROW(io::parseCase(replaced(kValidCase, "[output]", "[surface]\nfield = \"density\"\nlevel = 1.0\n[output]"),
                             "c.toml"),
               InputError);
  EXPECT_THROW(io::parseCase(replaced(kValidCase, "[output]", "[tracers]\nevery = 1\n[output]"), "c.toml"), InputError);
}

struct BadCase {
  const char* what;
  const char* from;
  const char* to;
  const char* key;  // must appear in the message
};

class CaseFileErrors : public ::testing::TestWithParam<BadCase> {};

TEST_P(CaseFileErrors, NameTheFileAndKey) {
  const BadCase& bad = GetParam();
  try {
    io::parseCase(replaced(kValidCase, bad.from, bad.to), "bad.toml");
    FAIL() << bad.what << ": accepted";
  } catch (const InputError& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("bad.toml"), std::string::npos) << message;
    EXPECT_NE(message.find(bad.key), std::string::npos) << bad.what << ": " << message;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Classes, CaseFileErrors,
    ::testing::Values(BadCase{"typo in a key", "tau = 0.8", "taux = 0.8", "lbm.taux"},
                      BadCase{"unknown table", "[output]", "[outptu]", "outptu"},
                      BadCase{"wrong type", "steps = 100", "steps = \"100\"", "case.steps"},
                      BadCase{"tau at the stability limit", "tau = 0.8", "tau = 0.5", "lbm.tau"},
                      BadCase{"tau below 1/2", "tau = 0.8", "tau = 0.3", "lbm.tau"},
                      BadCase{"non-positive size", "size = [64, 32]", "size = [64, 0]", "domain.size"},
                      BadCase{"negative size", "size = [64, 32]", "size = [-4, 32]", "domain.size"},
                      BadCase{"wrong number of sizes", "size = [64, 32]", "size = [64, 32, 8]", "domain.size"},
                      BadCase{"face named twice", "faces = [\"y-\", \"y+\"]", "faces = [\"y-\", \"y-\"]",
                              "boundary[0].faces"},
                      BadCase{"unknown face", "faces = [\"y-\", \"y+\"]", "faces = [\"y-\", \"w+\"]",
                              "boundary[0].faces"},
                      BadCase{"face on a periodic axis", "faces = [\"y-\", \"y+\"]", "faces = [\"x-\"]",
                              "boundary[0].faces"},
                      BadCase{"z face in 2D", "faces = [\"y-\", \"y+\"]", "faces = [\"z-\"]", "boundary[0].faces"},
                      BadCase{"unknown boundary type", "type = \"wall\"", "type = \"slip\"", "boundary[0].type"},
                      BadCase{"moving wall pushing into the fluid", "velocity = [0.1, 0.0]", "velocity = [0.1, 0.05]",
                              "boundary[1].velocity"},
                      BadCase{"unknown lattice", "lattice = \"D2Q9\"", "lattice = \"D2Q7\"", "lbm.lattice"},
                      BadCase{"unknown collision", "collision = \"bgk\"", "collision = \"mrtt\"", "lbm.collision"},
                      BadCase{"force of the wrong size", "body_force = [1e-6, 0.0]", "body_force = [1e-6]",
                              "lbm.body_force"},
                      BadCase{"zero steps", "steps = 100", "steps = 0", "case.steps"},
                      BadCase{"unknown field", "fields = [\"velocity\"]", "fields = [\"vorticity\"]", "output.fields"},
                      BadCase{"bad name", "name = \"channel\"", "name = \"a/b\"", "case.name"},
                      BadCase{"TOML syntax", "steps = 100", "steps = = 100", "TOML syntax error"},
                      BadCase{"unknown on_error", "[output]", "[insitu]\non_error = \"retry\"\n[output]",
                              "insitu.on_error"}),
    [](const ::testing::TestParamInfo<BadCase>& info) { return "Case" + std::to_string(info.index); });

TEST(CaseFile, MissingFileIsAnInputError) {
  EXPECT_THROW(io::loadCase("/nonexistent/case.toml"), InputError);
}

TEST(CaseFile, RepositoryCasesAreValid) {
  // Every case shipped in data/cases, of every solver.
  int cases = 0;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(OCTOFLOW_SOURCE_DIR) + "/data/cases")) {
    if (entry.path().extension() != ".toml") continue;
    ++cases;
    EXPECT_NO_THROW(io::loadCase(entry.path().string())) << entry.path();
  }
  EXPECT_GE(cases, 8);
}

TEST(CaseFile, PhysicalUnitsSetTheRelaxationTimeAndConvert) {
  // dx = 1 mm, dx/dt = 1 m/s (dt = 1 ms): water-like nu = 1e-4 m^2/s is 0.1 in lattice units.
  std::string text = replaced(kValidCase, "tau = 0.8\n", "");
  text = replaced(text, "[lbm]", "[units]\nlength = 0.001\nvelocity = 1.0\nviscosity = 1e-4\ndensity = 1000.0\n[lbm]");
  const io::CaseDescription d = io::parseCase(text, "units.toml");
  EXPECT_TRUE(lbm::lbmCaseOf(d).units.given);
  EXPECT_NEAR(lbm::lbmCaseOf(d).config.tau, 0.8f, 1e-6f);
  EXPECT_DOUBLE_EQ(lbm::lbmCaseOf(d).units.timeStep(), 1e-3);
  EXPECT_DOUBLE_EQ(lbm::lbmCaseOf(d).units.toSiVelocity(0.05), 0.05);
  // p = (rho - 1)/3 rho_SI (dx/dt)^2: a lattice density of 1.03 is 10 Pa at 1000 kg/m^3.
  EXPECT_NEAR(lbm::lbmCaseOf(d).units.toSiPressure(1.03), 10.0, 1e-9);
  // Force scale rho dx^4/dt^2 = 1000 * 1e-12 / 1e-6 = 1e-3 N in 3D; per unit depth 1 N/m in 2D.
  EXPECT_NEAR(lbm::lbmCaseOf(d).units.toSiForce(2.0, 3), 2e-3, 1e-15);
  EXPECT_NEAR(lbm::lbmCaseOf(d).units.toSiForce(2.0, 2), 2.0, 1e-12);
}

TEST(CaseFile, PhysicalUnitsConflictsAreNamed) {
  const std::string withUnits =
      replaced(kValidCase, "[lbm]", "[units]\nlength = 0.001\nvelocity = 1.0\nviscosity = 1e-4\n[lbm]");
  EXPECT_THROW(
      {
        try {
          io::parseCase(withUnits, "u.toml");  // tau and units.viscosity both given
        } catch (const InputError& error) {
          EXPECT_NE(std::string(error.what()).find("lbm.tau"), std::string::npos) << error.what();
          throw;
        }
      },
      InputError);
  EXPECT_THROW(io::parseCase(replaced(withUnits, "length = 0.001\n", ""), "u.toml"), InputError);
  // A tiny lattice viscosity would be unstable: named, not run.
  const std::string unstable = replaced(replaced(withUnits, "tau = 0.8\n", ""), "viscosity = 1e-4", "viscosity = 1e-9");
  try {
    io::parseCase(unstable, "u.toml");
    FAIL() << "a lattice viscosity of 1e-6 was accepted";
  } catch (const InputError& error) {
    EXPECT_NE(std::string(error.what()).find("units.viscosity"), std::string::npos) << error.what();
  }
}

TEST(CaseFile, OpenFacesSharingAnEdgeAreRejected) {
  std::string text = replaced(kValidCase, "periodic = [true, false]", "periodic = [false, false]");
  text = replaced(text, "faces = [\"y-\", \"y+\"]\ntype = \"wall\"", "faces = [\"y-\", \"x+\"]\ntype = \"outflow\"");
  try {
    io::parseCase(text, "open.toml");
    FAIL() << "outflow faces y- and x+ (one edge) accepted";
  } catch (const InputError& error) {
    EXPECT_NE(std::string(error.what()).find("share an edge"), std::string::npos) << error.what();
  }
}

// The hash a checkpoint keeps of the case's state-defining tables: the values count, not the layout.
TEST(CaseFile, StateHashFollowsTheValuesNotTheLayout) {
  const std::uint64_t hash = io::parseCase(kValidCase, "a.toml").stateHash;
  const std::string relaid = replaced(replaced(kValidCase, "tau = 0.8\n", ""), "[lbm]\n", "[lbm]\ntau   =   0.80  # moved\n");
  EXPECT_EQ(io::parseCase(relaid, "b.toml").stateHash, hash);
  EXPECT_EQ(io::parseCase(replaced(kValidCase, "every = 10", "every = 20"), "c.toml").stateHash, hash)
      << "[output] does not define the state";
  EXPECT_NE(io::parseCase(replaced(kValidCase, "[1e-6, 0.0]", "[2e-6, 0.0]"), "d.toml").stateHash, hash);
  EXPECT_NE(io::parseCase(replaced(kValidCase, "tau = 0.8", "tau = 0.8000001"), "e.toml").stateHash, hash);
}

// Inputs the case-parser fuzzer (fuzz/CaseParserFuzz.cpp) found to abort or reach undefined
// behaviour, kept in tests/data/fuzz_regressions/: each is an InputError, except valid_*.toml,
// which load. (The sanitizer build, preset asan, is the one that sees undefined behaviour.)
TEST(CaseFile, FuzzerFindingsAreInputErrorsOrLoad) {
  const std::filesystem::path folder = std::filesystem::path(OCTOFLOW_SOURCE_DIR) / "tests/data/fuzz_regressions";
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(folder)) {
    if (entry.path().extension() != ".toml") continue;
    ++files;
    std::ifstream in(entry.path(), std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    const std::string name = entry.path().filename().string();
    if (name.rfind("valid_", 0) == 0)
      EXPECT_NO_THROW(io::parseCase(text.str(), name)) << name;
    else
      EXPECT_THROW(io::parseCase(text.str(), name), InputError) << name;
  }
  EXPECT_GE(files, 5);
}
