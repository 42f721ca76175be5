#include "cubescale/common/format_error.hpp"
#include "register.hpp"

namespace py = pybind11;

namespace cubescale::bindings {

void register_errors(py::module_& m) {
  (void)m;
  // The Python class lives in cubescale.errors, with file, member and offset attributes.
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const FormatError& e) {
      py::object cls = py::module_::import("cubescale.errors").attr("FormatError");
      py::object err = cls(e.message(), e.file(), e.member(), e.offset());
      PyErr_SetObject(cls.ptr(), err.ptr());
    }
  });
}

}  // namespace cubescale::bindings
