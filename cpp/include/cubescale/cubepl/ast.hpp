#pragma once
// The syntax tree of a CubePL program (Cube's language for derived metrics). A program is
// one expression; a block `{ statements; return expr; }` is an expression too. The parser
// builds it once per metric; the evaluator (evaluate.hpp) walks it over whole arrays.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <regex>
#include <string>
#include <vector>

namespace cubescale::cubepl {

struct Expr;
struct Stmt;
using ExprPtr = std::unique_ptr<Expr>;

struct Block {
  std::vector<Stmt> statements;
};

// Along the call tree, which values a metric reference reads: those of the evaluation's
// own flavour (`metric::m()`, `metric::m(*)`), or inclusive (`i`) / exclusive (`e`) ones.
enum class Flavour : std::uint8_t { Same, Inclusive, Exclusive };

enum class Op : std::uint8_t {
  Add, Sub, Mul, Div, Pow, Neg,             // arithmetic
  Eq, Ne, Lt, Gt, Le, Ge,                   // numeric comparisons: 1 or 0
  And, Or, Xor, Not,                        // logic on "non-zero is true"
  StrEq, StrSeq, Regex,                     // eq (exact), seq (case-insensitive), =~ (std::regex search)
  Lower, Upper,                             // strings
  Sqrt, Sin, Asin, Cos, Acos, Tan, Atan, Exp, Log, Abs, Sgn, Floor, Ceil, Min, Max
};

struct Expr {
  enum class Kind : std::uint8_t { Number, String, Variable, Metric, Apply, Block };
  Kind kind = Kind::Number;
  std::size_t offset = 0;  // byte offset in the program text
  double number = 0;
  std::string name;        // String: the text; Variable: name without ${}; Metric: uniq name
  Op op = Op::Add;         // Apply
  Flavour flavour = Flavour::Same;  // Metric
  std::vector<ExprPtr> args;        // Apply: operands; Variable: [index] when indexed
  std::shared_ptr<const std::regex> regex;  // Apply(Regex)
  std::unique_ptr<cubepl::Block> block;     // Block: statements, the last one a return
};

struct Stmt {
  enum class Kind : std::uint8_t { Assign, If, While, Global, Return, MetricSet };
  Kind kind = Kind::Assign;
  std::size_t offset = 0;
  std::string name;                 // Assign, Global: variable; MetricSet: metric
  ExprPtr index;                    // Assign: element (null: element 0)
  ExprPtr value;                    // Assign: value; While: condition; Return: result
  std::vector<ExprPtr> conditions;  // If: if, elseif ...
  std::vector<Block> branches;      // If: one per condition, plus the else branch if any
};

struct Program {
  ExprPtr expr;
};

}  // namespace cubescale::cubepl
