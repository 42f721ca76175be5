#pragma once
// Which variables a program declares global and which it reads, found by walking its tree
// (depth bounded by the parser). When a <cubeplinit> fails, the metrics that read one of its
// globals must fail too instead of reading the unset masks as 0.
#include <set>
#include <string>

#include "cubescale/cubepl/ast.hpp"

namespace cubescale::cubepl {

std::set<std::string, std::less<>> declared_globals(const Program& program);
// Variables read, without the predefined ${cube::...} and ${calculation::...}.
std::set<std::string, std::less<>> variables_read(const Program& program);

}  // namespace cubescale::cubepl
