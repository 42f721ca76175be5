#include "cubescale/timeline/expression.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <variant>

namespace cubescale::timeline {

namespace {

struct Token {
  std::string text;
  bool quoted = false;
  std::size_t position = 0;
};

std::vector<Token> tokenize(const std::string& s) {
  std::vector<Token> out;
  std::size_t i = 0;
  while (i < s.size()) {
    if (std::isspace(static_cast<unsigned char>(s[i]))) {
      ++i;
      continue;
    }
    Token t{"", false, i};
    if (s[i] == '"') {
      t.quoted = true;
      ++i;
      while (i < s.size() && s[i] != '"') {
        if (s[i] == '\\' && i + 1 < s.size()) ++i;  // \" and \\ inside a literal
        t.text += s[i++];
      }
      if (i == s.size()) throw ExpressionError(t.position, "unterminated quoted literal");
      ++i;
    } else {
      while (i < s.size() && !std::isspace(static_cast<unsigned char>(s[i])) && s[i] != '"') t.text += s[i++];
    }
    out.push_back(std::move(t));
  }
  return out;
}

std::optional<double> number(const std::string& s) {
  double x = 0;
  const auto* end = s.data() + s.size();
  auto [p, ec] = std::from_chars(s.data(), end, x);
  if (ec != std::errc() || p != end || !std::isfinite(x)) return std::nullopt;
  return x;
}

// A stack entry: a literal not yet consumed, or an expression.
using Entry = std::variant<Token, std::unique_ptr<Node>>;

std::unique_ptr<Node> make(Node::Kind kind, std::size_t position) {
  auto n = std::make_unique<Node>();
  n->kind = kind;
  n->position = position;
  return n;
}

Token pop_literal(std::vector<Entry>& stack, const Token& op, const char* what) {
  if (stack.empty() || !std::holds_alternative<Token>(stack.back()))
    throw ExpressionError(op.position, "'" + op.text + "' needs " + what + " (a quoted literal) before it");
  auto t = std::get<Token>(std::move(stack.back()));
  stack.pop_back();
  return t;
}

std::unique_ptr<Node> pop_expression(std::vector<Entry>& stack, const Token& op) {
  if (stack.empty()) throw ExpressionError(op.position, "'" + op.text + "' needs an expression before it");
  auto entry = std::move(stack.back());
  stack.pop_back();
  if (auto* node = std::get_if<std::unique_ptr<Node>>(&entry)) return std::move(*node);
  const auto& literal = std::get<Token>(entry);
  const auto x = number(literal.text);
  if (!x)
    throw ExpressionError(literal.position, "'" + literal.text + "' is neither a number nor an expression (operand of '" +
                                                op.text + "' at position " + std::to_string(op.position) + ")");
  auto n = make(Node::Kind::Constant, literal.position);
  n->constant = *x;
  return n;
}

bool contains_aggregate(const Node& n) {
  if (n.kind == Node::Kind::Aggregate) return true;
  for (const auto& c : n.children)
    if (contains_aggregate(*c)) return true;
  return false;
}

// Sets a new node's depth from its children; refuses expressions deeper than the limit.
std::unique_ptr<Node> finished(std::unique_ptr<Node> n) {
  for (const auto& c : n->children) n->depth = std::max(n->depth, c->depth + 1);
  if (n->depth > kMaxExpressionDepth)
    throw ExpressionError(n->position, "expression nested deeper than " + std::to_string(kMaxExpressionDepth) + " levels");
  return n;
}

void apply_operator(std::vector<Entry>& stack, const Token& op) {
  using K = Node::Kind;
  if (op.text == "source-counter") {
    const auto interpolation = pop_literal(stack, op, "an interpolation (\"stairstep\" or \"linear\")");
    const auto metric = pop_literal(stack, op, "a metric (name or id)");
    auto n = make(K::Source, op.position);
    const auto how = parse_interpolation(interpolation.text);
    if (!how) throw ExpressionError(interpolation.position, "unknown interpolation '" + interpolation.text + "' (stairstep, linear)");
    n->interpolation = *how;
    n->metric = metric.text;
    stack.emplace_back(finished(std::move(n)));
  } else if (op.text == "aggregate") {
    const auto function = pop_literal(stack, op, "a function (\"sum\", \"min\", \"max\" or \"avg\")");
    auto child = pop_expression(stack, op);
    if (contains_aggregate(*child)) throw ExpressionError(op.position, "aggregates may not nest");
    auto n = make(K::Aggregate, op.position);
    if (function.text == "sum") n->aggregation = Aggregation::Sum;
    else if (function.text == "min") n->aggregation = Aggregation::Min;
    else if (function.text == "max") n->aggregation = Aggregation::Max;
    else if (function.text == "avg") n->aggregation = Aggregation::Avg;
    else throw ExpressionError(function.position, "unknown aggregate function '" + function.text + "' (sum, min, max, avg)");
    n->children.push_back(std::move(child));
    stack.emplace_back(finished(std::move(n)));
  } else if (op.text == "diff-quot") {
    const auto window = pop_literal(stack, op, "a window (grid points, e.g. \"0\")");
    auto child = pop_expression(stack, op);
    const auto w = number(window.text);
    if (!w || *w < 0 || *w != std::floor(*w) || *w > 1e6)
      throw ExpressionError(window.position, "the window of diff-quot is a whole number of grid points >= 0, not '" +
                                                 window.text + "'");
    auto n = make(K::DiffQuot, op.position);
    n->window = static_cast<std::size_t>(*w);
    n->children.push_back(std::move(child));
    stack.emplace_back(finished(std::move(n)));
  } else if (op.text == "+" || op.text == "-" || op.text == "*" || op.text == "/") {
    auto b = pop_expression(stack, op);
    auto a = pop_expression(stack, op);
    const auto kind = op.text == "+" ? K::Add : op.text == "-" ? K::Subtract : op.text == "*" ? K::Multiply : K::Divide;
    auto n = make(kind, op.position);
    n->children.push_back(std::move(a));
    n->children.push_back(std::move(b));
    stack.emplace_back(finished(std::move(n)));
  } else {
    throw ExpressionError(op.position, "unknown operator '" + op.text +
                                           "' (source-counter, aggregate, diff-quot, + - * /; literals are quoted)");
  }
}

std::string quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string number_text(double x) {
  char buffer[32];
  auto [p, ec] = std::to_chars(buffer, buffer + sizeof buffer, x);
  return std::string(buffer, p);
}

void collect_aggregates(const Node& n, std::vector<const Node*>& out) {
  for (const auto& c : n.children) collect_aggregates(*c, out);
  if (n.kind == Node::Kind::Aggregate) out.push_back(&n);
}

}  // namespace

Expression parse_expression(const std::string& text) {
  std::vector<Entry> stack;
  for (auto& token : tokenize(text)) {
    if (token.quoted || number(token.text)) stack.emplace_back(std::move(token));
    else apply_operator(stack, token);
  }
  if (stack.empty()) throw ExpressionError(0, "empty expression");
  if (stack.size() > 1) {
    const auto position = std::holds_alternative<Token>(stack[1]) ? std::get<Token>(stack[1]).position
                                                                  : std::get<std::unique_ptr<Node>>(stack[1])->position;
    throw ExpressionError(position, std::to_string(stack.size()) + " results left: an operator is missing");
  }
  Token end{"end of expression", false, text.size()};
  Expression e;
  e.root = pop_expression(stack, end);
  e.text = text;
  return e;
}

std::vector<const Node*> Expression::aggregates() const {
  std::vector<const Node*> out;
  if (root) collect_aggregates(*root, out);
  return out;
}

std::string to_string(const Node& n) {
  using K = Node::Kind;
  switch (n.kind) {
    case K::Constant: return quote(number_text(n.constant));
    case K::Source:
      return quote(n.metric) + " " + quote(n.interpolation == Interpolation::Linear ? "linear" : "stairstep") +
             " source-counter";
    case K::Aggregate: {
      static const char* names[] = {"sum", "min", "max", "avg"};
      return to_string(*n.children[0]) + " " + quote(names[static_cast<int>(n.aggregation)]) + " aggregate";
    }
    case K::DiffQuot: return to_string(*n.children[0]) + " " + quote(std::to_string(n.window)) + " diff-quot";
    default: {
      const char op = n.kind == K::Add ? '+' : n.kind == K::Subtract ? '-' : n.kind == K::Multiply ? '*' : '/';
      return to_string(*n.children[0]) + " " + to_string(*n.children[1]) + " " + op;
    }
  }
}

std::string Expression::to_string() const { return root ? timeline::to_string(*root) : ""; }

}  // namespace cubescale::timeline
