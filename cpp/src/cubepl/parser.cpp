#include "cubescale/cubepl/parser.hpp"

#include <cctype>
#include <charconv>
#include <optional>

namespace cubescale::cubepl {

namespace {

enum class T : std::uint8_t {
  End, Number, String, Var, Metric, Ident, Regex,
  LParen, RParen, LBrace, RBrace, LBracket, RBracket, Comma, Semi,
  Assign, EqEq, NotEq, Lt, Gt, Le, Ge, Plus, Minus, Star, Slash, Caret, Match
};

struct Token {
  T type = T::End;
  std::size_t offset = 0;
  std::string_view text;  // Var, Metric: the name; String: the contents; Ident: the word
  double number = 0;
};

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }
constexpr std::string_view kMetricSet = "cube::metric::set::";

bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == ':'; }
bool name_char(char c) { return word_char(c) || c == '#' || c == '.'; }

// Splits the program text into tokens on demand: the parser asks for a regular expression
// right after `=~`, where `/` does not mean division.
class Lexer {
 public:
  explicit Lexer(std::string_view s) : s_(s) {}

  Token next() {
    skip_space();
    Token t;
    t.offset = pos_;
    if (pos_ >= s_.size()) return t;
    const char c = s_[pos_];
    if (c == '$') return variable(t);
    if (c == '"') return string(t);
    if (std::isdigit(static_cast<unsigned char>(c)) || (c == '.' && pos_ + 1 < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_ + 1]))))
      return number(t);
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') return word(t);
    return punctuation(t);
  }

  // A /regular expression/ from the current position; backslash escapes the next character.
  Token regex() {
    skip_space();
    Token t;
    t.type = T::Regex;
    t.offset = pos_;
    if (pos_ >= s_.size() || s_[pos_] != '/') throw Error(pos_, "expected a /regular expression/ after =~");
    pattern_.clear();
    for (++pos_; pos_ < s_.size() && s_[pos_] != '/'; ++pos_) {
      if (s_[pos_] == '\\' && pos_ + 1 < s_.size() && s_[pos_ + 1] == '/') ++pos_;
      else if (s_[pos_] == '\\' && pos_ + 1 < s_.size()) pattern_ += s_[pos_++];
      pattern_ += s_[pos_];
    }
    if (pos_ >= s_.size()) throw Error(t.offset, "regular expression not closed by /");
    ++pos_;
    t.text = pattern_;
    return t;
  }

 private:
  void skip_space() {
    while (pos_ < s_.size()) {
      if (std::isspace(static_cast<unsigned char>(s_[pos_]))) {
        ++pos_;
      } else if (s_.substr(pos_, 2) == "//") {  // a comment to the end of the line
        const auto end = s_.find('\n', pos_);
        pos_ = end == std::string_view::npos ? s_.size() : end;
      } else {
        break;
      }
    }
  }

  Token variable(Token& t) {
    if (s_.substr(pos_, 2) != "${") throw Error(pos_, "expected ${name}");
    const auto start = pos_ + 2;
    auto end = start;
    while (end < s_.size() && name_char(s_[end])) ++end;
    if (end == start || end >= s_.size() || s_[end] != '}') throw Error(pos_, "malformed variable: expected ${name}");
    t.type = T::Var;
    t.text = s_.substr(start, end - start);
    pos_ = end + 1;
    return t;
  }

  Token string(Token& t) {
    const auto end = s_.find('"', pos_ + 1);
    if (end == std::string_view::npos) throw Error(pos_, "string not closed by \"");
    t.type = T::String;
    t.text = s_.substr(pos_ + 1, end - pos_ - 1);
    pos_ = end + 1;
    return t;
  }

  Token number(Token& t) {
    auto end = pos_;
    while (end < s_.size() && (std::isdigit(static_cast<unsigned char>(s_[end])) || s_[end] == '.')) ++end;
    if (end < s_.size() && (s_[end] == 'e' || s_[end] == 'E')) {
      auto e = end + 1;
      if (e < s_.size() && (s_[e] == '+' || s_[e] == '-')) ++e;
      if (e < s_.size() && std::isdigit(static_cast<unsigned char>(s_[e]))) {
        while (e < s_.size() && std::isdigit(static_cast<unsigned char>(s_[e]))) ++e;
        end = e;
      }
    }
    const auto [p, ec] = std::from_chars(s_.data() + pos_, s_.data() + end, t.number);
    if (ec != std::errc() || p != s_.data() + end) throw Error(pos_, "malformed number \"" + std::string(s_.substr(pos_, end - pos_)) + "\"");
    t.type = T::Number;
    pos_ = end;
    return t;
  }

  Token word(Token& t) {
    static constexpr std::string_view kMetric = "metric::";
    auto end = pos_;
    while (end < s_.size() && word_char(s_[end])) ++end;
    if (s_.substr(pos_, kMetric.size()) == kMetric) {
      // Metric names may hold more than word characters (PAPI counters: "A:B:cpu=0"): up to '('.
      auto name_end = pos_ + kMetric.size();
      while (name_end < s_.size() && s_[name_end] != '(' && !std::isspace(static_cast<unsigned char>(s_[name_end]))) ++name_end;
      const auto name = s_.substr(pos_ + kMetric.size(), name_end - pos_ - kMetric.size());
      for (std::string_view other : {"fixed::", "call::", "set::", "get::"})
        if (name.substr(0, other.size()) == other)
          throw Error(pos_, "unsupported construct 'metric::" + std::string(other) + "'");
      if (name.empty()) throw Error(pos_, "metric:: without a metric name");
      t.type = T::Metric;
      t.text = name;
      pos_ = name_end;
      return t;
    }
    t.type = T::Ident;
    t.text = s_.substr(pos_, end - pos_);
    pos_ = end;
    return t;
  }

  Token punctuation(Token& t) {
    static constexpr std::pair<std::string_view, T> kTwo[] = {
        {"==", T::EqEq}, {"!=", T::NotEq}, {"<=", T::Le}, {">=", T::Ge}, {"=~", T::Match}};
    for (const auto& [text, type] : kTwo) {
      if (s_.substr(pos_, 2) == text) {
        t.type = type;
        pos_ += 2;
        return t;
      }
    }
    static constexpr std::string_view kOne = "(){}[],;=<>+-*/^";
    static constexpr T kOneType[] = {T::LParen, T::RParen, T::LBrace, T::RBrace, T::LBracket, T::RBracket, T::Comma, T::Semi,
                                     T::Assign, T::Lt, T::Gt, T::Plus, T::Minus, T::Star, T::Slash, T::Caret};
    const auto k = kOne.find(s_[pos_]);
    if (k == std::string_view::npos) {
      const auto byte = static_cast<unsigned char>(s_[pos_]);
      throw Error(pos_, std::isprint(byte) ? "unexpected character '" + std::string(1, s_[pos_]) + "'"
                                           : "unexpected byte " + std::to_string(byte));
    }
    t.type = kOneType[k];
    ++pos_;
    return t;
  }

  std::string_view s_;
  std::size_t pos_ = 0;
  std::string pattern_;  // the last regular expression, unescaped
};

struct Function {
  std::string_view name;
  Op op;
  int arity;
};

constexpr Function kFunctions[] = {
    {"sqrt", Op::Sqrt, 1}, {"sin", Op::Sin, 1},     {"asin", Op::Asin, 1},   {"cos", Op::Cos, 1},
    {"acos", Op::Acos, 1}, {"tan", Op::Tan, 1},     {"atan", Op::Atan, 1},   {"exp", Op::Exp, 1},
    {"log", Op::Log, 1},   {"abs", Op::Abs, 1},     {"sgn", Op::Sgn, 1},     {"floor", Op::Floor, 1},
    {"ceil", Op::Ceil, 1}, {"min", Op::Min, 2},
    {"max", Op::Max, 2},   {"lowercase", Op::Lower, 1}, {"uppercase", Op::Upper, 1}};

// Words of full CubePL that this subset does not evaluate: named in the error.
constexpr std::string_view kUnsupportedWords[] = {"env", "random", "sizeof", "defined", "arg1", "arg2", "pos", "neg"};

class Parser {
 public:
  explicit Parser(std::string_view text) : lex_(text) { advance(); }

  Program run() {
    Program p;
    p.expr = expression();
    if (cur_.type != T::End) fail("unexpected text after the expression");
    return p;
  }

 private:
  // Counts nesting on every recursive path (expression, block) against kMaxNesting.
  struct Nested {
    explicit Nested(Parser& p) : p_(p) {
      if (++p_.depth_ > kMaxNesting) throw Error(p_.cur_.offset, "expression nested too deeply");
    }
    ~Nested() { --p_.depth_; }
    Parser& p_;
  };

  [[noreturn]] void fail(const std::string& message) const { throw Error(cur_.offset, message); }
  void advance() { cur_ = lex_.next(); }
  bool is_word(std::string_view w) const { return cur_.type == T::Ident && cur_.text == w; }
  bool accept(T type) {
    if (cur_.type != type) return false;
    advance();
    return true;
  }
  void expect(T type, const std::string& what) {
    if (!accept(type)) fail("expected " + what);
  }

  static ExprPtr apply(Op op, std::size_t offset, ExprPtr a, ExprPtr b = nullptr) {
    auto e = std::make_unique<Expr>();
    e->kind = Expr::Kind::Apply;
    e->op = op;
    e->offset = offset;
    e->args.push_back(std::move(a));
    if (b) e->args.push_back(std::move(b));
    return e;
  }

  ExprPtr expression() { return disjunction(); }

  // One left-associative level: operands from `next`, operators recognized by `op_of`.
  template <class OpOf>
  ExprPtr left_associative(ExprPtr (Parser::*next)(), OpOf op_of) {
    auto left = (this->*next)();
    while (const auto op = op_of()) {
      const auto at = cur_.offset;
      advance();
      left = apply(*op, at, std::move(left), (this->*next)());
    }
    return left;
  }

  ExprPtr disjunction() {
    return left_associative(&Parser::conjunction, [this]() -> std::optional<Op> {
      if (is_word("or")) return Op::Or;
      if (is_word("xor")) return Op::Xor;
      return std::nullopt;
    });
  }

  ExprPtr conjunction() {
    return left_associative(&Parser::comparison, [this]() -> std::optional<Op> {
      if (is_word("and")) return Op::And;
      return std::nullopt;
    });
  }

  ExprPtr comparison() {
    auto left = sum();
    const auto at = cur_.offset;
    Op op;
    switch (cur_.type) {
      case T::EqEq: op = Op::Eq; break;
      case T::NotEq: op = Op::Ne; break;
      case T::Lt: op = Op::Lt; break;
      case T::Gt: op = Op::Gt; break;
      case T::Le: op = Op::Le; break;
      case T::Ge: op = Op::Ge; break;
      case T::Match: return regex_match(std::move(left));
      default:
        if (is_word("eq")) op = Op::StrEq;
        else if (is_word("seq")) op = Op::StrSeq;
        else return left;
    }
    advance();
    return apply(op, at, std::move(left), sum());
  }

  ExprPtr regex_match(ExprPtr subject) {
    const auto at = cur_.offset;
    const auto pattern = lex_.regex();  // read right after =~, before the next token
    check_regex(pattern);
    auto e = apply(Op::Regex, at, std::move(subject));
    try {
      e->regex = std::make_shared<const std::regex>(std::string(pattern.text),
                                                    std::regex::ECMAScript | std::regex_constants::__polynomial);
    } catch (const std::regex_error& err) {
      throw Error(pattern.offset, std::string("invalid regular expression: ") + err.what());
    }
    advance();
    return e;
  }

  // std::regex compiles and matches recursively and expands counted repetitions into copies:
  // keep patterns small, with few groups and small counts (Score-P's specs use {0,1}).
  static void check_regex(const Token& pattern) {
    const auto p = pattern.text;
    if (p.size() > kMaxRegexBytes) throw Error(pattern.offset, "regular expression longer than " + std::to_string(kMaxRegexBytes) + " bytes");
    std::size_t groups = 0, repeated = 0;
    for (std::size_t i = 0; i < p.size(); ++i) {
      if (p[i] == '\\') {
        ++i;
      } else if (p[i] == '(') {
        ++groups;
      } else if (p[i] == '{') {
        std::size_t n = 0;  // the largest count of {n}, {n,} or {n,m}
        for (std::size_t j = i + 1; j < p.size() && p[j] != '}'; ++j)
          if (std::isdigit(static_cast<unsigned char>(p[j]))) n = std::min<std::size_t>(n * 10 + (p[j] - '0'), 100000);
          else if (p[j] == ',') repeated += n, n = 0;
        repeated += n;
      }
    }
    if (groups > 128) throw Error(pattern.offset, "regular expression with more than 128 groups");
    if (repeated > 256) throw Error(pattern.offset, "unsupported construct: counted repetitions adding up to more than 256 in a regular expression");
  }

  ExprPtr sum() {
    return left_associative(&Parser::product, [this]() -> std::optional<Op> {
      if (cur_.type == T::Plus) return Op::Add;
      if (cur_.type == T::Minus) return Op::Sub;
      return std::nullopt;
    });
  }

  ExprPtr product() {
    return left_associative(&Parser::unary, [this]() -> std::optional<Op> {
      if (cur_.type == T::Star) return Op::Mul;
      if (cur_.type == T::Slash) return Op::Div;
      return std::nullopt;
    });
  }

  ExprPtr unary() {
    Nested guard(*this);
    const auto at = cur_.offset;
    if (accept(T::Minus)) return apply(Op::Neg, at, unary());
    if (accept(T::Plus)) return unary();
    if (is_word("not")) {
      advance();
      return apply(Op::Not, at, unary());
    }
    auto base = primary();
    if (cur_.type == T::Caret) {
      const auto pow_at = cur_.offset;
      advance();
      return apply(Op::Pow, pow_at, std::move(base), unary());
    }
    return base;
  }

  ExprPtr primary() {
    auto e = std::make_unique<Expr>();
    e->offset = cur_.offset;
    switch (cur_.type) {
      case T::Number:
        e->number = cur_.number;
        advance();
        return e;
      case T::String:
        e->kind = Expr::Kind::String;
        e->name = cur_.text;
        advance();
        return e;
      case T::Var:
        e->kind = Expr::Kind::Variable;
        e->name = cur_.text;
        advance();
        if (accept(T::LBracket)) {
          e->args.push_back(expression());
          expect(T::RBracket, "] after an index");
        }
        return e;
      case T::Metric:
        return metric(std::move(e));
      case T::LParen: {
        advance();
        auto inner = expression();
        expect(T::RParen, ")");
        return inner;
      }
      case T::LBrace:
        e->kind = Expr::Kind::Block;
        e->block = std::make_unique<Block>(block());
        return e;
      case T::Ident:
        return word(std::move(e));
      case T::End:
        fail("unexpected end of the expression");
      default:
        fail("expected a value");
    }
  }

  ExprPtr metric(ExprPtr e) {
    e->kind = Expr::Kind::Metric;
    e->name = cur_.text;
    advance();
    expect(T::LParen, "( after metric::" + e->name);
    if (accept(T::RParen)) return e;
    e->flavour = flavour();
    if (accept(T::Comma)) flavour();  // system tree flavour: at a location, both are the value itself
    expect(T::RParen, ") closing metric::" + e->name + "(...)");
    return e;
  }

  Flavour flavour() {
    Flavour f;
    if (cur_.type == T::Star) f = Flavour::Same;
    else if (is_word("i")) f = Flavour::Inclusive;
    else if (is_word("e")) f = Flavour::Exclusive;
    else fail("expected i, e or * as a calculation flavour");
    advance();
    return f;
  }

  ExprPtr word(ExprPtr e) {
    const auto w = cur_.text;
    if (w == "true" || w == "false") {
      e->number = w == "true" ? 1 : 0;
      advance();
      return e;
    }
    for (const auto& f : kFunctions) {
      if (w != f.name) continue;
      advance();
      expect(T::LParen, "( after a function name");
      auto a = expression();
      ExprPtr b;
      if (f.arity == 2) {
        expect(T::Comma, ", between two arguments");
        b = expression();
      }
      expect(T::RParen, ") after the arguments");
      return apply(f.op, e->offset, std::move(a), std::move(b));
    }
    unsupported_word(w);
    fail("unknown word '" + std::string(w) + "'");
  }

  void unsupported_word(std::string_view w) const {
    for (const auto u : kUnsupportedWords)
      if (w == u) fail("unsupported construct '" + std::string(w) + "'");
    if (w.substr(0, 6) == "cube::") fail("unsupported construct '" + std::string(w) + "'");
  }

  // { statement ... } as used by blocks, if/else branches and loops.
  Block block() {
    Nested guard(*this);
    expect(T::LBrace, "{");
    Block b;
    while (!accept(T::RBrace)) {
      if (cur_.type == T::End) fail("block not closed by }");
      b.statements.push_back(statement());
      while (accept(T::Semi)) {
      }
    }
    return b;
  }

  Stmt statement() {
    Stmt s;
    s.offset = cur_.offset;
    if (cur_.type == T::Var) return assignment(std::move(s));
    if (is_word("if")) return if_statement(std::move(s));
    if (is_word("while")) {
      advance();
      s.kind = Stmt::Kind::While;
      s.value = condition();
      s.branches.push_back(block());
      return s;
    }
    if (is_word("return")) {
      advance();
      s.kind = Stmt::Kind::Return;
      s.value = expression();
      return s;
    }
    if (is_word("global") || is_word("local")) {
      const bool global = cur_.text == "global";
      advance();
      expect(T::LParen, "( after global/local");
      if (cur_.type != T::Ident) fail("expected a variable name");
      s.name = cur_.text;
      advance();
      expect(T::RParen, ")");
      s.kind = Stmt::Kind::Global;
      if (!global) s.name.clear();  // local(x): variables are local anyway
      return s;
    }
    if (cur_.type == T::Ident && starts_with(cur_.text, kMetricSet)) return metric_set(std::move(s));
    if (cur_.type == T::Ident) unsupported_word(cur_.text);
    fail("expected a statement");
  }

  // cube::metric::set::m("key", "value"): a property for viewers (Score-P's specs mark
  // metrics of absent paradigms "VOID", which Cube hides); it does not change values.
  Stmt metric_set(Stmt s) {
    s.kind = Stmt::Kind::MetricSet;
    s.name = cur_.text.substr(kMetricSet.size());
    advance();
    expect(T::LParen, "( after cube::metric::set::" + s.name);
    for (const char* what : {"a \"property\"", ", between property and value", "a \"value\""}) {
      if (!accept(what[0] == ',' ? T::Comma : T::String)) fail(std::string("expected ") + what);
    }
    expect(T::RParen, ") after cube::metric::set::" + s.name + "(...)");
    return s;
  }

  Stmt assignment(Stmt s) {
    s.kind = Stmt::Kind::Assign;
    s.name = cur_.text;
    advance();
    if (accept(T::LBracket)) {
      s.index = expression();
      expect(T::RBracket, "] after an index");
    }
    expect(T::Assign, "= in an assignment");
    s.value = expression();
    return s;
  }

  Stmt if_statement(Stmt s) {
    s.kind = Stmt::Kind::If;
    advance();
    s.conditions.push_back(condition());
    s.branches.push_back(block());
    while (is_word("elseif")) {
      advance();
      s.conditions.push_back(condition());
      s.branches.push_back(block());
    }
    if (is_word("else")) {
      advance();
      s.branches.push_back(block());
    }
    return s;
  }

  ExprPtr condition() {
    expect(T::LParen, "( before a condition");
    auto c = expression();
    expect(T::RParen, ") after a condition");
    return c;
  }

  Lexer lex_;
  Token cur_;
  std::size_t depth_ = 0;
};

}  // namespace

Program parse(std::string_view text) { return Parser(text).run(); }

}  // namespace cubescale::cubepl
