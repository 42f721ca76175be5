#include "cubescale/cubepl/variables.hpp"

namespace cubescale::cubepl {

namespace {

using Names = std::set<std::string, std::less<>>;

struct Walk {
  Names globals, read;

  void expr(const Expr& e) {
    if (e.kind == Expr::Kind::Variable && e.name.rfind("cube::", 0) != 0 && e.name.rfind("calculation::", 0) != 0)
      read.insert(e.name);
    for (const auto& a : e.args) expr(*a);
    if (e.block) block(*e.block);
  }

  void block(const Block& b) {
    for (const auto& s : b.statements) statement(s);
  }

  void statement(const Stmt& s) {
    if (s.kind == Stmt::Kind::Global && !s.name.empty()) globals.insert(s.name);
    for (const auto* e : {s.index.get(), s.value.get()})
      if (e) expr(*e);
    for (const auto& c : s.conditions) expr(*c);
    for (const auto& b : s.branches) block(b);
  }
};

Walk walk(const Program& p) {
  Walk w;
  w.expr(*p.expr);
  return w;
}

}  // namespace

Names declared_globals(const Program& program) { return walk(program).globals; }
Names variables_read(const Program& program) { return walk(program).read; }

}  // namespace cubescale::cubepl
