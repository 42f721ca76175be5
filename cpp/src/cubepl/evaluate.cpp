#include "cubescale/cubepl/evaluate.hpp"

#include <algorithm>

#include "cubescale/cubepl/error.hpp"

namespace cubescale::cubepl {

namespace {

using Shape = Value::Shape;
using Array = std::vector<Value>;
using Variables = std::map<std::string, Array, std::less<>>;

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

// Walks a program's tree once; each node works on whole arrays (value.hpp).
class Interpreter {
 public:
  Interpreter(const Context& context, const Globals& globals, Globals* init_globals, Flavour same)
      : ctx_(context), globals_(globals), init_globals_(init_globals), same_(same) {
    const auto& d = ctx_.dims;
    const std::size_t size = d.cnodes + ctx_.regions.size() + d.locations + ctx_.metric_count;
    max_steps_ = 200'000 + 100 * size;
    max_index_ = 65'536 + 2 * size;
  }

  Value run(const Program& p) { return eval(*p.expr); }

 private:
  bool init() const { return init_globals_ != nullptr; }

  Value eval(const Expr& e) {
    switch (e.kind) {
      case Expr::Kind::Number: return Value::of(e.number);
      case Expr::Kind::String: return Value::of_text(e.name);
      case Expr::Kind::Variable: return variable(e);
      case Expr::Kind::Metric: return metric(e);
      case Expr::Kind::Block: return block(*e.block);
      case Expr::Kind::Apply: return apply(e);
    }
    throw Error(e.offset, "unknown expression");
  }

  Value apply(const Expr& e) {
    const auto& d = ctx_.dims;
    const Value a = eval(*e.args[0]);
    switch (e.op) {
      case Op::Regex: return apply_text(e.op, a, a, e.regex.get(), d, e.offset);
      case Op::Lower: case Op::Upper: return apply_text(e.op, a, a, nullptr, d, e.offset);
      case Op::StrEq: case Op::StrSeq: return apply_text(e.op, a, eval(*e.args[1]), nullptr, d, e.offset);
      default: break;
    }
    if (e.args.size() == 1) return apply_unary(e.op, a, d, e.offset);
    return apply_binary(e.op, a, eval(*e.args[1]), d, e.offset);
  }

  // { statements }: the value of the return statement that ends it, else 0.
  Value block(const Block& b) {
    if (statements(b)) {
      Value v = std::move(result_);
      result_ = {};
      return v;
    }
    return Value::of(0);
  }

  // True when a return statement ran; its value is in result_.
  bool statements(const Block& b) {
    for (const auto& s : b.statements)
      if (statement(s)) return true;
    return false;
  }

  void step(std::size_t offset) {
    if (++steps_ > max_steps_)
      throw Error(offset, "the program runs more than " + std::to_string(max_steps_) + " steps (endless loop?)");
  }

  bool statement(const Stmt& s) {
    step(s.offset);
    switch (s.kind) {
      case Stmt::Kind::Assign: assign(s); return false;
      case Stmt::Kind::Global:
        if (init() && !s.name.empty()) (*init_globals_)[s.name];  // created once, kept if declared before
        return false;
      case Stmt::Kind::Return:
        if (varying_)
          throw Error(s.offset, "unsupported construct: return inside an if whose condition varies by call path or location");
        result_ = eval(*s.value);
        return true;
      case Stmt::Kind::While: return loop(s);
      case Stmt::Kind::MetricSet: return false;  // a property for viewers, not a value
      case Stmt::Kind::If: return branch(s, 0);
    }
    return false;
  }

  bool loop(const Stmt& s) {
    while (true) {
      const Value c = eval(*s.value);
      if (c.varies()) throw Error(s.offset, "unsupported construct: while with a condition that varies by call path or location");
      if (as_number(c) == 0) return false;
      step(s.offset);
      if (statements(s.branches[0])) return true;
    }
  }

  // The if/elseif chain from condition k on.
  bool branch(const Stmt& s, std::size_t k) {
    if (k == s.conditions.size()) return k < s.branches.size() && statements(s.branches[k]);
    const Value c = eval(*s.conditions[k]);
    if (!c.varies()) return as_number(c) != 0 ? statements(s.branches[k]) : branch(s, k + 1);
    // If-conversion: both sides run on copies of the variables, merged by the condition.
    const Variables before = locals_;
    ++varying_;
    statements(s.branches[k]);
    Variables taken = std::move(locals_);
    locals_ = before;
    branch(s, k + 1);
    --varying_;
    merge(c, taken, s.offset);
    return false;
  }

  void merge(const Value& cond, const Variables& taken, std::size_t offset) {
    const Value zero = Value::of(0);
    Variables merged;
    auto combine = [&](const std::string& name, const Array* t, const Array* f) {
      const std::size_t n = std::max(t ? t->size() : 0, f ? f->size() : 0);
      Array out(n);
      for (std::size_t i = 0; i < n; ++i) {
        const Value& a = t && i < t->size() ? (*t)[i] : zero;
        const Value& b = f && i < f->size() ? (*f)[i] : zero;
        out[i] = a.same_as(b) ? a : select(cond, a, b, ctx_.dims, offset);
      }
      merged.emplace(name, std::move(out));
    };
    for (const auto& [name, t] : taken) {
      const auto f = locals_.find(name);
      combine(name, &t, f == locals_.end() ? nullptr : &f->second);
    }
    for (const auto& [name, f] : locals_)
      if (!taken.count(name)) combine(name, nullptr, &f);
    locals_ = std::move(merged);
  }

  void assign(const Stmt& s) {
    const Value v = eval(*s.value);
    std::size_t i = 0;
    if (s.index) {
      const Value idx = eval(*s.index);
      if (idx.varies()) throw Error(s.offset, "unsupported construct: assigning an array element chosen per call path or location");
      const double x = as_number(idx);
      if (!(x >= 0) || x >= static_cast<double>(max_index_))
        throw Error(s.offset, "array index " + as_text(idx) + " out of range (0.." + std::to_string(max_index_ - 1) + ")");
      i = static_cast<std::size_t>(x);
    }
    Array& target = target_of(s.name, s.offset);
    if (target.size() <= i) target.resize(i + 1, Value::of(0));
    target[i] = v;
  }

  Array& target_of(const std::string& name, std::size_t offset) {
    if (starts_with(name, "cube::") || starts_with(name, "calculation::"))
      throw Error(offset, "cannot assign the predefined variable ${" + name + "}");
    if (init()) {
      const auto g = init_globals_->find(name);
      if (g != init_globals_->end()) return g->second;
    } else if (globals_.count(name)) {
      throw Error(offset, "unsupported construct: assigning the global variable ${" + name + "} in <cubepl>");
    }
    return locals_[name];
  }

  Value variable(const Expr& e) {
    const Array* array = lookup(e.name, e.offset);
    if (!e.args.empty()) {
      const Value idx = eval(*e.args[0]);
      return array ? gather(*array, idx, ctx_.dims, e.offset) : Value::of(0);
    }
    return array && !array->empty() ? (*array)[0] : Value::of(0);
  }

  // Locals, then globals, then the report's predefined variables; nullptr: unset (reads 0).
  const Array* lookup(const std::string& name, std::size_t offset) {
    if (const auto l = locals_.find(name); l != locals_.end()) return &l->second;
    if (const auto g = globals_.find(name); g != globals_.end()) return &g->second;
    if (starts_with(name, "cube::") || starts_with(name, "calculation::")) return &predefined(name, offset);
    return nullptr;
  }

  const Array& predefined(const std::string& name, std::size_t offset) {
    if (const auto it = predefined_.find(name); it != predefined_.end()) return it->second;
    return predefined_.emplace(name, make_predefined(name, offset)).first->second;
  }

  Array make_predefined(const std::string& name, std::size_t offset) const {
    const auto& d = ctx_.dims;
    const auto& regions = ctx_.regions;
    auto count = [](std::size_t n) { return Array{Value::of(static_cast<double>(n))}; };
    if (name == "cube::#callpaths") return count(d.cnodes);
    if (name == "cube::#regions") return count(regions.size());
    if (name == "cube::#metrics") return count(ctx_.metric_count);
    if (name == "cube::#locations") return count(d.locations);
    if (name == "cube::#locationgroups") return count(ctx_.location_group_count);
    if (name == "cube::#rootcnodes")
      return count(static_cast<std::size_t>(std::count(ctx_.cnode_parent.begin(), ctx_.cnode_parent.end(), 0xffffffffu)));
    if (name == "cube::callpath::calleeid") {
      Array a;
      for (const auto r : ctx_.cnode_region) a.push_back(Value::of(r));
      return a;
    }
    if (const auto field = region_field(name, "cube::region::")) {
      Array a;
      for (const auto& r : regions) a.push_back(Value::of_text(r.*field));
      return a;
    }
    if (starts_with(name, "calculation::") && init())
      throw Error(offset, "${" + name + "} has no value in <cubeplinit> (no call path is being calculated)");
    if (name == "calculation::metric::id") return count(ctx_.metric_index);
    if (name == "calculation::callpath::id" || name == "calculation::region::id") {
      auto v = std::make_shared<std::vector<double>>(d.cnodes);
      for (std::size_t c = 0; c < d.cnodes; ++c) (*v)[c] = name == "calculation::callpath::id" ? double(c) : double(ctx_.cnode_region[c]);
      return {Value::of_numbers(Shape::PerCnode, std::move(v))};
    }
    if (const auto field = region_field(name, "calculation::region::")) {
      auto v = std::make_shared<std::vector<std::string>>(d.cnodes);
      for (std::size_t c = 0; c < d.cnodes; ++c) (*v)[c] = regions[ctx_.cnode_region[c]].*field;
      return {Value::of_texts(std::move(v))};
    }
    throw Error(offset, "unsupported construct: predefined variable ${" + name + "}");
  }

  using Field = std::string RegionText::*;
  static Field region_field(std::string_view name, std::string_view prefix) {
    if (!starts_with(name, prefix)) return nullptr;
    const auto rest = name.substr(prefix.size());
    if (rest == "name") return &RegionText::name;
    if (rest == "mangled_name" || rest == "mangled::name") return &RegionText::mangled_name;
    if (rest == "mod") return &RegionText::mod;
    if (rest == "paradigm") return &RegionText::paradigm;
    if (rest == "role") return &RegionText::role;
    if (rest == "url") return &RegionText::url;
    if (rest == "description") return &RegionText::description;
    return nullptr;
  }

  Value metric(const Expr& e) {
    if (init()) throw Error(e.offset, "unsupported construct: metric values in <cubeplinit>");
    const Flavour f = e.flavour == Flavour::Same ? same_ : e.flavour;
    const auto key = std::make_pair(e.name, f);
    if (const auto it = metrics_.find(key); it != metrics_.end()) return it->second;
    Value v = Value::of(0);
    if (auto values = ctx_.metric ? ctx_.metric(e.name, f) : nullptr) {
      if (values->size() != ctx_.dims.cnodes * ctx_.dims.locations) throw Error(e.offset, "metric::" + e.name + " has the wrong shape");
      v = Value::of_numbers(Shape::Full, std::move(values));
    }
    return metrics_.emplace(key, std::move(v)).first->second;
  }

  const Context& ctx_;
  const Globals& globals_;
  Globals* init_globals_;  // set while running <cubeplinit>: global(...) writes there
  Flavour same_;
  Variables locals_;
  std::map<std::string, Array, std::less<>> predefined_;
  std::map<std::pair<std::string, Flavour>, Value> metrics_;
  Value result_;
  std::size_t steps_ = 0, max_steps_ = 0, max_index_ = 0;
  std::size_t varying_ = 0;  // depth of if-converted branches
};

}  // namespace

void run_init(const Program& program, const Context& context, Globals& globals) {
  Interpreter(context, globals, &globals, Flavour::Exclusive).run(program);
}

std::vector<double> evaluate(const Program& program, const Context& context, const Globals& globals, Flavour same) {
  const Value v = Interpreter(context, globals, nullptr, same).run(program);
  return to_matrix(v, context.dims, program.expr->offset);
}

}  // namespace cubescale::cubepl
