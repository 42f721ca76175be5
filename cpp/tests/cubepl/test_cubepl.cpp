// CubePL: parsing the programs of the shipped remapping specs, evaluation over arrays
// against per-element computation, and errors for constructs outside the subset.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <regex>
#include <sstream>

#include "cubescale/cubepl/evaluate.hpp"
#include "cubescale/cubepl/parser.hpp"
#include "cubescale/cubepl/variables.hpp"

using namespace cubescale::cubepl;

namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Every <tag>...</tag> body of a spec file (spec files hold raw '<' inside the programs).
std::vector<std::string> bodies(const std::string& text, const std::string& tag) {
  std::vector<std::string> out;
  const std::string open = "<" + tag + ">", close = "</" + tag + ">";
  for (auto p = text.find(open); p != std::string::npos; p = text.find(open, p + 1)) {
    const auto e = text.find(close, p);
    out.push_back(text.substr(p + open.size(), e - p - open.size()));
  }
  return out;
}

// Three call paths (0 root, 1 and 2 its children) over two locations.
Context small_context() {
  Context c;
  c.dims = {3, 2};
  c.cnode_region = {0, 1, 2};
  c.cnode_parent = {0xffffffffu, 0, 0};
  c.regions = {{"main", "", "", "", "", "", ""}, {"MPI_Barrier", "", "MPI", "", "", "", "MPI"},
               {"TRACE BUFFER FLUSH", "", "", "", "", "", "EPIK"}};
  c.metric_count = 2;
  return c;
}

const std::vector<double> kTimeExcl = {1, 2, 3, 4, 5, 6};
const std::vector<double> kIdleExcl = {0.5, 0, 1, 0, 0, 1};

std::vector<double> run(const std::string& cubepl, const std::string& init = "") {
  auto c = small_context();
  c.metric = [](const std::string& name, Flavour f) -> std::shared_ptr<const std::vector<double>> {
    if (f != Flavour::Exclusive) return nullptr;
    if (name == "time") return std::make_shared<const std::vector<double>>(kTimeExcl);
    if (name == "omp_idle_threads") return std::make_shared<const std::vector<double>>(kIdleExcl);
    return nullptr;
  };
  Globals g;
  if (!init.empty()) run_init(parse(init), c, g);
  return evaluate(parse(cubepl), c, g, Flavour::Exclusive);
}

std::string error_of(const std::string& cubepl, const std::string& init = "") {
  try {
    run(cubepl, init);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(CubePL, EveryProgramOfTheShippedSpecsParses) {
  std::size_t programs = 0;
  for (const char* name : {"scorep.spec", "scalasca.spec"}) {
    const auto text = read_text(std::string(CUBESCALE_SHARED_DATA) + "/cubepl/" + name);
    ASSERT_FALSE(text.empty()) << name;
    for (const char* tag : {"cubepl", "cubeplinit"}) {
      for (const auto& body : bodies(text, tag)) {
        EXPECT_NO_THROW(parse(body)) << name << ": " << body;
        ++programs;
      }
    }
  }
  EXPECT_EQ(programs, 48u + 38u + 48u);  // <cubepl> in both, <cubeplinit> in Score-P's
}

TEST(CubePL, ArithmeticAndFunctionsMatchElementwise) {
  const auto v = run("sqrt(metric::time(e)) * 2 + max(metric::omp_idle_threads(*), 0.75) - 1 / 4 ^ 2");
  for (std::size_t i = 0; i < v.size(); ++i)
    EXPECT_DOUBLE_EQ(v[i], std::sqrt(kTimeExcl[i]) * 2 + std::max(kIdleExcl[i], 0.75) - 1.0 / 16.0) << i;
}

TEST(CubePL, DivisionFollowsCubeLib) {
  const auto v = run("metric::omp_idle_threads() / (metric::time() - 1)");
  EXPECT_EQ(v[1], 0.0);           // 0 / x
  EXPECT_TRUE(std::isnan(v[0]));  // x / 0
  EXPECT_DOUBLE_EQ(v[2], 1.0 / 2.0);
}

TEST(CubePL, ScalascaConditionOnTheRegionVariesByCallPath) {
  // Scalasca's "execution": everything but EPIK's buffer flushes.
  const auto v = run(R"({ if (not(${calculation::region::description} eq "EPIK")) {
      ${a}=metric::time(*,*)-metric::omp_idle_threads(*,*); } else { ${a}=0; }; return ${a}; })");
  const std::vector<double> want = {0.5, 2, 2, 4, 0, 0};
  EXPECT_EQ(v, want);
  const auto mpi = run(R"({ if ((${calculation::region::description} eq "MPI") and
      ((${calculation::region::name} seq "mpi_barrier") or (${calculation::region::name} seq "mpi_win_post")))
      { ${a}=metric::time(*,*); } else { ${a}=0; }; return ${a}; })");
  EXPECT_EQ(mpi, (std::vector<double>{0, 0, 3, 4, 0, 0}));
}

TEST(CubePL, ScorePMasksFromCubeplinit) {
  const std::string init = R"({ global(execution); ${i} = 0;
      while( ${i} < ${cube::#callpaths} ) { ${execution}[${i}] = 0; ${regionid} = ${cube::callpath::calleeid}[${i}] ;
        if ( not ( ${cube::region::name}[${regionid}] eq "TRACE BUFFER FLUSH" ) ) { ${execution}[${i}] = 1; };
        ${i} = ${i} + 1; }; return 0; })";
  const auto v = run(R"({ ${a} = 0; if ( ${execution}[${calculation::callpath::id}] == 1 )
      { ${a} = metric::time(e) - metric::omp_idle_threads(e); }; return ${a}; })", init);
  EXPECT_EQ(v, (std::vector<double>{0.5, 2, 2, 4, 0, 0}));
  const auto re = run(R"(${m}[${calculation::callpath::id}] * metric::time())",
                      R"({ global(m); ${i} = 0; while (${i} < ${cube::#callpaths}) {
         if (lowercase(${cube::region::name}[${cube::callpath::calleeid}[${i}]]) =~ /^mpi_.*barrier/) { ${m}[${i}] = 1; };
         ${i} = ${i} + 1; }; return 0; })");
  EXPECT_EQ(re, (std::vector<double>{0, 0, 3, 4, 0, 0}));
}

TEST(CubePL, MissingMetricsReadZero) {
  EXPECT_EQ(run("metric::no_such_metric() + 1"), std::vector<double>(6, 1.0));
}

TEST(CubePL, UnsupportedConstructsAreNamed) {
  EXPECT_NE(error_of("metric::fixed::time()").find("'metric::fixed::'"), std::string::npos);
  EXPECT_NE(error_of("random(1)").find("'random'"), std::string::npos);
  EXPECT_NE(error_of("${calculation::sysres::id}").find("${calculation::sysres::id}"), std::string::npos);
  EXPECT_NE(error_of("{ while (metric::time() > 0) { ${a} = 1; }; return 0; }").find("while"), std::string::npos);
  EXPECT_NE(error_of("{ if (metric::time() > 2) { return 1; }; return 0; }").find("return inside an if"), std::string::npos);
  EXPECT_NE(error_of("1", "{ return metric::time(); }").find("<cubeplinit>"), std::string::npos);
  EXPECT_NE(error_of("{ while (1) { ${a} = 1; }; return 0; }").find("steps"), std::string::npos);
  EXPECT_NE(error_of("\"text\"").find("text"), std::string::npos);
}

TEST(CubePL, SyntaxErrorsGiveOffsets) {
  try {
    parse("metric::time() + ");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.offset(), 17u);
  }
  EXPECT_THROW(parse(std::string(100000, '(')), Error);  // nesting bounded, no stack overflow
  EXPECT_THROW(parse(std::string(100000, '-') + "1"), Error);
  EXPECT_THROW(parse("\"a\" =~ /a{1000}{1000}/"), Error);  // large counted repetitions refused
  EXPECT_NO_THROW(parse("\"MPI_Init\" =~ /^MPI_(Init(_thread|ialized){0,1})$/"));  // Score-P's newer specs
  EXPECT_THROW(parse("${a"), Error);
  EXPECT_THROW(parse("{ ${a} = 1; "), Error);
}

TEST(CubePL, MetricPropertiesAreAcceptedAndGlobalsFound) {
  // Score-P's newer specs hide metrics of absent paradigms; values are not affected.
  EXPECT_EQ(run(R"({ cube::metric::set::mpi("value", "VOID"); return 2; })"), std::vector<double>(6, 2.0));
  const auto p = parse(R"({ global(mask); ${mask}[0] = ${other} + ${cube::#callpaths}; return 0; })");
  EXPECT_EQ(declared_globals(p), (std::set<std::string, std::less<>>{"mask"}));
  EXPECT_EQ(variables_read(p), (std::set<std::string, std::less<>>{"other"}));
}
