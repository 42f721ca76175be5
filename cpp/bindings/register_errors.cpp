#include <string>
#include <system_error>

#include "cubescale/common/atomic_file.hpp"
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
  // Failed system calls of this module's core become OSError with errno and file name, which
  // Python turns into FileNotFoundError, PermissionError ... The core names the file as the
  // what-argument; errors of other categories (iostreams, futures) keep pybind11's mapping.
  py::register_local_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const std::system_error& e) {
      const auto& category = e.code().category();
      if (category != std::generic_category() && category != std::system_category()) throw;
      const std::string what = e.what(), suffix = ": " + e.code().message();
      py::object file = py::none();
      if (what.size() > suffix.size() && what.compare(what.size() - suffix.size(), suffix.size(), suffix) == 0)
        file = py::reinterpret_steal<py::object>(
            PyUnicode_DecodeFSDefaultAndSize(what.data(), static_cast<Py_ssize_t>(what.size() - suffix.size())));
      if (!file) throw py::error_already_set();
      // A device or FIFO at a writer's target (EEXIST) says why in its own words.
      const std::string message =
          dynamic_cast<const NotARegularFile*>(&e) ? NotARegularFile::kReason : e.code().message();
      py::object err = py::module_::import("builtins").attr("OSError")(e.code().value(), message, file);
      PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(err.ptr())), err.ptr());
    }
  });
}

}  // namespace cubescale::bindings
