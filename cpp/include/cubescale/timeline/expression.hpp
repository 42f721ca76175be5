#pragma once
// Metric expressions in reverse Polish notation, as Vampir's (paper 004):
//   "2" "stairstep" source-counter "sum" aggregate "0" diff-quot
//   "4" "stairstep" source-counter "sum" aggregate "0" diff-quot /
// Quoted tokens are literals; bare words are operators that pop their operands:
//   source-counter  (metric, interpolation) -> the metric's timeline on the target element
//   aggregate       (expression, function)  -> the expression on every element below the
//                                              target (itself included), combined by sum,
//                                              min, max or avg at every grid point
//   diff-quot       (expression, window)    -> derivative by time (difference quotient over
//                                              2 x (window + 1) grid intervals)
//   + - * /         (a, b)                  -> point-wise; a literal number is a constant
// Parsing checks arity and kinds and names the position of the bad token. Aggregates may not
// nest (one level of the hierarchy per expression, as in the paper).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "cubescale/timeline/timeline.hpp"

namespace cubescale::timeline {

struct ExpressionError : std::invalid_argument {
  std::size_t position;  // character offset of the offending token
  ExpressionError(std::size_t pos, const std::string& what)
      : std::invalid_argument("position " + std::to_string(pos) + ": " + what), position(pos) {}
};

enum class Aggregation : std::uint8_t { Sum, Min, Max, Avg };

struct Node {
  enum class Kind : std::uint8_t { Constant, Source, Aggregate, DiffQuot, Add, Subtract, Multiply, Divide } kind;
  double constant = 0;
  std::string metric;                                 // Source
  Interpolation interpolation = Interpolation::Stairstep;
  Aggregation aggregation = Aggregation::Sum;         // Aggregate
  std::size_t window = 0;                             // DiffQuot
  std::vector<std::unique_ptr<Node>> children;
  std::size_t position = 0;                           // of its operator token
  std::size_t depth = 1;                              // levels below and including it
};
// Deeper expressions are refused: evaluation recurses once per level.
inline constexpr std::size_t kMaxExpressionDepth = 512;

struct Expression {
  std::unique_ptr<Node> root;
  std::string text;
  // Aggregate nodes in evaluation order (post-order): the staged evaluation reduces these.
  std::vector<const Node*> aggregates() const;
  // The expression back in reverse Polish notation (canonical spacing and quoting).
  std::string to_string() const;
};

Expression parse_expression(const std::string& text);
std::string to_string(const Node& node);

}  // namespace cubescale::timeline
