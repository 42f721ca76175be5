#include <string>
#include <system_error>

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
    } catch (const std::system_error& e) {
      // Failed system calls become OSError with errno and file name, which Python turns into
      // FileNotFoundError, PermissionError ...; the core names the file as the what-argument.
      std::string file = e.what();
      const std::string suffix = ": " + e.code().message();
      if (file.size() >= suffix.size() && file.compare(file.size() - suffix.size(), suffix.size(), suffix) == 0)
        file.resize(file.size() - suffix.size());
      py::object err = py::module_::import("builtins")
                           .attr("OSError")(e.code().value(), e.code().message(), file);
      PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(err.ptr())), err.ptr());
    }
  });
}

}  // namespace cubescale::bindings
