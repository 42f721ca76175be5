// The measurement runtime for Python (cpp/include/cubescale/measure/): manual regions, and an
// automatic mode that records every Python function call (optionally C calls) through the
// C-level profiling hook (PyEval_SetProfile), not a Python callback. A code object's region
// id is cached in the code object itself (co_extra), so a call costs a pointer lookup, the
// clock and the recorder's enter. The core stays free of Python: only this file knows frames.
#include <Python.h>
#include <frameobject.h>
#include <pythread.h>
#include <pybind11/stl.h>

#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "cubescale/measure/mismatch_warning.hpp"
#include "cubescale/measure/process_report.hpp"
#include "cubescale/measure/scope.hpp"
#include "cubescale/measure/trace_writer.hpp"
#include "register.hpp"

namespace py = pybind11;

namespace cubescale::bindings {
using namespace cubescale::measure;

namespace {

#if PY_VERSION_HEX >= 0x030C0000
#define CUBESCALE_REQUEST_EXTRA PyUnstable_Eval_RequestCodeExtraIndex
#define CUBESCALE_GET_EXTRA PyUnstable_Code_GetExtra
#define CUBESCALE_SET_EXTRA PyUnstable_Code_SetExtra
#else
#define CUBESCALE_REQUEST_EXTRA _PyEval_RequestCodeExtraIndex
#define CUBESCALE_GET_EXTRA _PyCode_GetExtra
#define CUBESCALE_SET_EXTRA _PyCode_SetExtra
#endif

Py_ssize_t extra_index = -1;
bool record_c_calls = false;
// Changes whenever the hook is installed on or removed from every thread: a thread's entries
// from before belong to frames the hook no longer follows (read and written under the GIL).
std::uint64_t hook_generation = 0;

// The calling thread's name as Python's threading module knows it, "Master thread" for the main
// thread (Score-P's name), "" when Python has no Thread object for it. Under the GIL; reads
// dictionaries and instance attributes only, so no Python code runs inside the hook.
std::string python_thread_name() {
  PyObject *type, *value, *traceback;
  PyErr_Fetch(&type, &value, &traceback);
  std::string name;
  PyObject* module_name = PyUnicode_FromString("threading");
  PyObject* threading = module_name ? PyImport_GetModule(module_name) : nullptr;
  Py_XDECREF(module_name);
  PyObject* ident = PyLong_FromUnsignedLong(PyThread_get_thread_ident());
  if (threading && ident) {
    PyObject* main_thread = PyObject_GetAttrString(threading, "_main_thread");
    PyObject* main_ident = main_thread ? PyObject_GetAttrString(main_thread, "_ident") : nullptr;
    PyObject* active = PyObject_GetAttrString(threading, "_active");
    if (main_ident && PyObject_RichCompareBool(main_ident, ident, Py_EQ) == 1) {
      name = "Master thread";
    } else if (active && PyDict_Check(active)) {
      if (PyObject* thread = PyDict_GetItemWithError(active, ident)) {  // borrowed
        PyObject* text = PyObject_GetAttrString(thread, "_name");
        if (text && PyUnicode_Check(text)) name = PyUnicode_AsUTF8(text);
        Py_XDECREF(text);
      }
    }
    Py_XDECREF(main_thread);
    Py_XDECREF(main_ident);
    Py_XDECREF(active);
  }
  Py_XDECREF(ident);
  Py_XDECREF(threading);
  PyErr_Clear();
  PyErr_Restore(type, value, traceback);
  return name;
}
// What the hook keeps per thread, in one thread-local (each access to a thread-local of a
// shared library is a call): the thread's recorder for the current measurement, and one entry
// per Python (or C) call the hook saw, whether it entered a region. The return pops it, so it
// needs no second lookup of the frame's code; returns of frames that were already running when
// the hook was installed find the stack empty and do nothing.
struct HookThread {
  std::uint64_t epoch = 0, generation = 0;
  ThreadRecorder* recorder = nullptr;
  std::vector<std::uint8_t> entered;
  // This thread's recorder in the current measurement; a thread new to it is named after its
  // Python thread (threads that ran before start() and thread pools' workers included).
  ThreadRecorder& thread() {
    if (epoch != measure::epoch() || !recorder) [[unlikely]] join();
    return *recorder;
  }
  [[gnu::noinline]] void join() {  // the slow path, kept out of the hook's code
    const bool fresh = this_thread_is_new();
    recorder = &this_thread(), epoch = measure::epoch();
    if (fresh)
      if (auto name = python_thread_name(); !name.empty()) recorder->rename(std::move(name));
  }
};
thread_local HookThread hook_thread;

// Installs (or with nullptr removes) the hook on every thread of the interpreter, as Python
// 3.12's PyEval_SetProfileAllThreads does; under the GIL, so no other thread runs meanwhile.
void set_profile_all_threads(Py_tracefunc hook) {
#if PY_VERSION_HEX >= 0x030C0000
  PyEval_SetProfileAllThreads(hook, nullptr);
#else
  PyThreadState* current = PyThreadState_Get();
  for (PyThreadState* t = PyInterpreterState_ThreadHead(current->interp); t; t = PyThreadState_Next(t))
    if (_PyEval_SetProfile(t, hook, nullptr) < 0) throw py::error_already_set();
#endif
  ++hook_generation;
}

// co_extra holds (epoch << 32) | (region + 1): a value from before a reset is stale.
RegionId code_region(PyCodeObject* code) {
  void* extra = nullptr;
  const auto now = epoch();
  if (extra_index >= 0 && CUBESCALE_GET_EXTRA(reinterpret_cast<PyObject*>(code), extra_index, &extra) == 0 && extra) {
    const auto v = reinterpret_cast<std::uintptr_t>(extra);
    if ((v >> 32) == (now & 0xffffffffu)) return static_cast<RegionId>((v & 0xffffffffu) - 1);
  }
  auto text = [&](const char* attr) {
    PyObject* o = PyObject_GetAttrString(reinterpret_cast<PyObject*>(code), attr);
    std::string s;
    if (o && PyUnicode_Check(o)) s = PyUnicode_AsUTF8(o);
    Py_XDECREF(o);
    PyErr_Clear();
    return s;
  };
  auto name = text("co_qualname");
  if (name.empty()) name = text("co_name");
  const auto r = global().region(name, text("co_filename"), code->co_firstlineno, "python", "function");
  if (extra_index >= 0)
    CUBESCALE_SET_EXTRA(reinterpret_cast<PyObject*>(code), extra_index,
                        reinterpret_cast<void*>(((now & 0xffffffffu) << 32) | (std::uintptr_t(r) + 1)));
  return r;
}

// Builtins of the measurement itself (its bindings): never regions.
std::unordered_set<const void*> ignored_builtins;

// A builtin's region, cached by its method definition (stable; the function objects are not).
RegionId c_region(PyObject* function) {
  static thread_local std::unordered_map<const void*, std::pair<std::uint64_t, RegionId>> cache;
  const void* key = function;
  std::string name = "builtin";
  if (PyCFunction_Check(function)) {
    auto* f = reinterpret_cast<PyCFunctionObject*>(function);
    key = f->m_ml;
    name = f->m_ml->ml_name;
    if (f->m_self && !PyModule_Check(f->m_self)) name = std::string(Py_TYPE(f->m_self)->tp_name) + "." + name;
    else if (f->m_module && PyUnicode_Check(f->m_module)) name = std::string(PyUnicode_AsUTF8(f->m_module)) + "." + name;
  }
  const auto now = epoch();
  if (auto it = cache.find(key); it != cache.end() && it->second.first == now) return it->second.second;
  const auto r = global().region(name, "", -1, "python", "function");
  if (ignored_builtins.count(key)) global().ignore(r);
  cache[key] = {now, r};
  return r;
}

int profile_hook(PyObject*, PyFrameObject* frame, int what, PyObject* arg) {
  auto& h = hook_thread;
  if (h.generation != hook_generation) h.entered.clear(), h.generation = hook_generation;
  switch (what) {
    case PyTrace_CALL: {
      PyCodeObject* code = PyFrame_GetCode(frame);
      const auto r = code_region(code);
      Py_DECREF(code);
      // Functions that are not recorded (filtered, or the measurement's own code such as
      // region.__enter__, which enters a region itself) are neither entered nor left.
      const bool recorded = global().recorded(r);
      if (recorded) h.thread().enter(r, true, now());
      h.entered.push_back(recorded);
      break;
    }
    case PyTrace_C_CALL: {
      if (!record_c_calls) break;
      const auto r = c_region(arg);
      const bool recorded = global().recorded(r);
      if (recorded) h.thread().enter(r, true, now());
      h.entered.push_back(recorded);
      break;
    }
    case PyTrace_C_RETURN:
    case PyTrace_C_EXCEPTION:
      if (!record_c_calls) break;
      [[fallthrough]];
    case PyTrace_RETURN:
      if (h.entered.empty()) break;
      if (h.entered.back()) h.thread().exit(now());
      h.entered.pop_back();
      break;
    default: break;
  }
  return 0;
}

// A region as a Python context manager: registered on first use (its id outlives measurements),
// entered and left without Python code in between (cubescale.measure.region subclasses it).
struct UserRegion {
  std::string name, file, paradigm, role;
  std::int64_t line = -1;
  std::optional<RegionId> id;
  RegionId get() {
    if (!id) id = global().region(name.empty() ? "?" : name, file, line, paradigm, role);
    return *id;
  }
};

}  // namespace

void register_measure(py::module_& m) {
  py::class_<UserRegion>(m, "UserRegion",
                       "A code region as a context manager: `with UserRegion(\"solve\"):` records the block on this "
                       "thread. Registered on first use; the id stays valid in later measurements.")
      .def(py::init([](std::string name, std::string file, std::int64_t line, std::string paradigm, std::string role) {
             return UserRegion{std::move(name), std::move(file), std::move(paradigm), std::move(role), line, {}};
           }),
           py::arg("name"), py::arg("file") = "", py::arg("line") = -1, py::arg("paradigm") = "user",
           py::arg("role") = "function", "A region named `name` (source file and line, CUBE's paradigm and role).")
      .def_property(
          "name", [](const UserRegion& r) { return r.name; },
          [](UserRegion& r, std::string name) { r.name = std::move(name), r.id.reset(); },
          "The region's name (set before its first use).")
      .def_property(
          "file", [](const UserRegion& r) { return r.file; },
          [](UserRegion& r, std::string file) { r.file = std::move(file), r.id.reset(); }, "Its source file.")
      .def_property(
          "line", [](const UserRegion& r) { return r.line; }, [](UserRegion& r, std::int64_t line) { r.line = line, r.id.reset(); },
          "Its first line (-1: none).")
      .def_property_readonly("paradigm", [](const UserRegion& r) { return r.paradigm; }, "CUBE's paradigm (user, mpi ...).")
      .def_property_readonly("role", [](const UserRegion& r) { return r.role; }, "CUBE's role (function, barrier ...).")
      .def_property_readonly("id", &UserRegion::get, "The region's id (registers it on first use).")
      .def(
          "__enter__",
          [](py::object self) {
            const auto r = self.cast<UserRegion&>().get();
            enter(hook_thread.thread(), global(), r);
            return self;
          },
          "Enters the region on this thread.")
      .def(
          "__exit__", [](UserRegion&, py::handle, py::handle, py::handle) { hook_thread.thread().exit(now()); },
          py::arg("exc_type"), py::arg("exc_value"), py::arg("traceback"), "Leaves it (also when an exception leaves).");
  if (extra_index < 0) extra_index = CUBESCALE_REQUEST_EXTRA(nullptr);
  m.def(
      "reset",
      [](const std::string& filter, std::size_t depth_limit) {
        reset(RegionFilter::parse(filter), depth_limit);
      },
      py::arg("filter") = "", py::arg("depth_limit") = 128,
      "Starts a new measurement: filter in Score-P's filter-file syntax, call paths deeper than depth_limit "
      "not recorded. Only while no thread measures.");
  m.def(
      "region",
      [](const std::string& name, const std::string& file, std::int64_t line, const std::string& paradigm,
         const std::string& role) { return global().region(name, file, line, paradigm, role); },
      py::arg("name"), py::arg("file") = "", py::arg("line") = -1, py::arg("paradigm") = "user",
      py::arg("role") = "function", "Registers a region (once per name, file, line); returns its id.");
  m.def(
      "enter", [](RegionId r) { enter(hook_thread.thread(), global(), r); }, py::arg("region"),
      "Enters a region on this thread.");
  m.def("exit", [] { hook_thread.thread().exit(now()); }, "Leaves the innermost region of this thread.");
  m.def(
      "add_bytes", [](std::uint64_t sent, std::uint64_t received) { hook_thread.thread().add_bytes(sent, received); },
      py::arg("sent"), py::arg("received"), "Adds bytes to this thread's current call path.");
  m.def(
      "counter", [](const std::string& name, const std::string& unit) { return global().counter(name, unit); },
      py::arg("name"), py::arg("unit") = "", "Registers a user counter (a metric); returns its id.");
  m.def(
      "add", [](std::uint32_t counter, double value) { hook_thread.thread().add_counter(counter, value); },
      py::arg("counter"), py::arg("value"), "Adds to a user counter on this thread's current call path.");
  m.def(
      "name_thread", [](const std::string& name) { hook_thread.thread().rename(name); }, py::arg("name"),
      "Names this thread's location.");
  m.def(
      "ignore_code",
      [](py::object code) {
        if (!PyCode_Check(code.ptr())) throw py::type_error("expected a code object");
        global().ignore(code_region(reinterpret_cast<PyCodeObject*>(code.ptr())));
      },
      py::arg("code"), "Leaves a Python function out of the automatic mode (e.g. the measurement's own wrappers).");
  m.def(
      "ignore_file", [](const std::string& file) { global().ignore_file(file); }, py::arg("file"),
      "Leaves every function of a source file (co_filename) out, now and in later measurements.");
  m.def(
      "ignore_builtin",
      [](py::object function) {
        if (!PyCFunction_Check(function.ptr())) throw py::type_error("expected a builtin function");
        ignored_builtins.insert(reinterpret_cast<PyCFunctionObject*>(function.ptr())->m_ml);
      },
      py::arg("function"), "Leaves a builtin (C) function out of the automatic mode's C calls.");
  m.def(
      "start_hook",
      [](bool c_calls, bool all_threads) {
        record_c_calls = c_calls;
        hook_thread.entered.clear();
        hook_thread.entered.reserve(256);
        hook_thread.thread();  // the thread that starts the hook gets its recorder first
        if (all_threads) {
          set_profile_all_threads(profile_hook);
          hook_thread.generation = hook_generation;
        } else {
          PyEval_SetProfile(profile_hook, nullptr);
        }
      },
      py::arg("c_calls") = false, py::arg("all_threads") = false,
      "Installs the C-level profiling hook on this thread (all_threads: on every thread that exists): every "
      "Python call (and C call) becomes a region.");
  m.def(
      "stop_hook",
      [](bool all_threads) {
        if (all_threads) set_profile_all_threads(nullptr);
        else PyEval_SetProfile(nullptr, nullptr);
      },
      py::arg("all_threads") = false, "Removes the profiling hook from this thread (all_threads: from every thread).");
  m.def(
      "mismatches", [] { return mismatch_warning(global()); },
      "One line on exits without an enter, enters of unknown region ids and regions still open, on "
      "which threads (empty: none). Only while no thread measures.");
  m.def(
      "close_all", [] { close_all_threads(); },
      "Closes every thread's open regions now (finalization; no thread may measure).");
  m.def(
      "to_profile",
      [](std::optional<RegionId> program) { return std::make_shared<profile::LocalProfile>(global().to_profile(program)); },
      py::arg("program") = py::none(),
      "Every thread's call tree as one local profile (_core.profile.LocalProfile); with `program`, every other "
      "root goes below that region (one root).");
  m.def(
      "write_process_report",
      [](const std::string& path, const std::string& host, const std::string& process,
         std::optional<RegionId> program) { write_process_report(global(), path, host, process, program); },
      py::arg("path"), py::arg("host") = "", py::arg("process") = "Process 0", py::arg("program") = py::none(),
      "Writes what this process measured as its own .cubex without MPI (machine > host > process > threads), as "
      "the C API's cubescale_write does; `cubescale collate` unifies such files of many processes.");
  m.def(
      "memory_bytes", [] { return global().memory_bytes(); },
      "Bytes the threads' recorders hold (call trees, stacks, counters).");
  m.def(
      "epoch", [] { return epoch(); }, "Changes with every reset(): cached region ids must be registered again.");
  m.def(
      "thread_count", [] { return global().thread_count(); }, "Threads that recorded something.");
  // Tracing (trace_writer.hpp): the writer of this measurement, MPI events of this thread.
  m.def(
      "trace",
      [](const std::string& directory, std::uint32_t rank, std::uint64_t buffer_bytes) {
        global().set_trace(std::make_shared<TraceWriter>(directory, rank, buffer_bytes));
      },
      py::arg("directory"), py::arg("rank") = 0, py::arg("buffer_bytes") = 1 << 20,
      "Traces the current measurement too: every thread's events go to this rank's OTF2 archive in `directory` "
      "(created), through a buffer of buffer_bytes per thread (at least 256 KiB) flushed when full.");
  m.def(
      "tracing", [] { return static_cast<bool>(global().trace()); }, "Whether the current measurement traces.");
  m.def(
      "clock", [] { return now(); }, "The recorder's clock now, in ticks (the trace's timestamps).");
  m.def(
      "ticks_per_second", [] { return 1.0 / seconds_per_tick(); }, "The recorder's clock rate.");
  auto writer = [] {
    const auto& t = global().trace();
    if (!t) throw std::logic_error("the measurement does not trace");
    return t;
  };
  m.def(
      "trace_clock_offset",
      [writer](std::uint64_t time, std::int64_t offset, double deviation) {
        writer()->add_clock_offset({time, offset, deviation});
      },
      py::arg("time"), py::arg("offset"), py::arg("deviation") = 0.0,
      "Records that rank 0's clock read local + offset at local time `time` (ticks; OTF2's ClockOffset).");
  m.def(
      "trace_world_size", [writer](std::uint32_t size) { writer()->set_world_size(size); }, py::arg("size"),
      "The number of ranks of MPI_COMM_WORLD.");
  m.def(
      "trace_communicator",
      [writer](std::uint32_t parent, std::vector<std::uint32_t> members) {
        return writer()->communicator(parent, std::move(members));
      },
      py::arg("parent"), py::arg("members"),
      "A communicator made from `parent` (0 MPI_COMM_WORLD, 1 MPI_COMM_SELF, or an id returned here) with its "
      "members' world ranks; returns its id for the MPI events.");
  auto events = [] { return hook_thread.thread().trace(); };
  m.def(
      "trace_send",
      [events](std::uint32_t peer, std::uint32_t comm, std::uint32_t tag, std::uint64_t bytes) {
        if (auto* t = events()) t->send(peer, comm, tag, bytes, now());
      },
      py::arg("peer"), py::arg("comm"), py::arg("tag"), py::arg("bytes"), "An MpiSend event on this thread.");
  m.def(
      "trace_recv",
      [events](std::uint32_t peer, std::uint32_t comm, std::uint32_t tag, std::uint64_t bytes) {
        if (auto* t = events()) t->receive(peer, comm, tag, bytes, now());
      },
      py::arg("peer"), py::arg("comm"), py::arg("tag"), py::arg("bytes"), "An MpiRecv event on this thread.");
  m.def(
      "trace_isend",
      [events](std::uint32_t peer, std::uint32_t comm, std::uint32_t tag, std::uint64_t bytes, std::uint64_t request) {
        if (auto* t = events()) t->isend(peer, comm, tag, bytes, request, now());
      },
      py::arg("peer"), py::arg("comm"), py::arg("tag"), py::arg("bytes"), py::arg("request"),
      "An MpiIsend event on this thread.");
  m.def(
      "trace_isend_complete",
      [events](std::uint64_t request) {
        if (auto* t = events()) t->isend_complete(request, now());
      },
      py::arg("request"), "An MpiIsendComplete event on this thread.");
  m.def(
      "trace_irecv_request",
      [events](std::uint64_t request) {
        if (auto* t = events()) t->irecv_request(request, now());
      },
      py::arg("request"), "An MpiIrecvRequest event on this thread.");
  m.def(
      "trace_irecv",
      [events](std::uint32_t peer, std::uint32_t comm, std::uint32_t tag, std::uint64_t bytes, std::uint64_t request) {
        if (auto* t = events()) t->irecv(peer, comm, tag, bytes, request, now());
      },
      py::arg("peer"), py::arg("comm"), py::arg("tag"), py::arg("bytes"), py::arg("request"),
      "An MpiIrecv event (the completion of a receive request) on this thread.");
  m.def(
      "trace_collective_begin",
      [events] {
        if (auto* t = events()) t->collective_begin(now());
      },
      "An MpiCollectiveBegin event on this thread.");
  m.def(
      "trace_collective_end",
      [events](const std::string& operation, std::uint32_t comm, std::int64_t root, std::uint64_t sent,
               std::uint64_t received) {
        if (auto* t = events())
          t->collective_end(operation, comm, root < 0 ? ThreadTrace::kNoRoot : static_cast<std::uint32_t>(root), sent,
                            received, now());
      },
      py::arg("operation"), py::arg("comm"), py::arg("root"), py::arg("sent"), py::arg("received"),
      "An MpiCollectiveEnd event: the MPI function (\"MPI_Allreduce\"), communicator, root (-1: none), bytes.");
  m.def(
      "trace_collective_request",
      [events](std::uint64_t request) {
        if (auto* t = events()) t->collective_request(request, now());
      },
      py::arg("request"), "A NonBlockingCollectiveRequest event (MPI_Iallreduce ...) on this thread.");
  m.def(
      "trace_collective_complete",
      [events](const std::string& operation, std::uint32_t comm, std::int64_t root, std::uint64_t sent,
               std::uint64_t received, std::uint64_t request) {
        if (auto* t = events())
          t->collective_complete(operation, comm, root < 0 ? ThreadTrace::kNoRoot : static_cast<std::uint32_t>(root),
                                 sent, received, request, now());
      },
      py::arg("operation"), py::arg("comm"), py::arg("root"), py::arg("sent"), py::arg("received"),
      py::arg("request"),
      "A NonBlockingCollectiveComplete event: the blocking form's MPI function (\"MPI_Allreduce\"), "
      "communicator, root (-1: none), bytes, the request.");
  m.def(
      "trace_thread_create",
      [events](std::uint64_t sequence) {
        if (auto* t = events()) t->thread_create(sequence, now());
      },
      py::arg("sequence"), "A ThreadCreate event on this thread (it starts the thread `sequence` of this process).");
  m.def(
      "trace_thread_begin",
      [events](std::uint64_t sequence) {
        if (auto* t = events()) t->thread_begin(sequence, now());
      },
      py::arg("sequence"), "A ThreadBegin event: this thread is the one ThreadCreate `sequence` started.");
  m.def(
      "trace_thread_end",
      [events](std::uint64_t sequence) {
        if (auto* t = events()) t->thread_end(sequence, now());
      },
      py::arg("sequence"), "A ThreadEnd event: this thread, started as `sequence`, ends.");
  m.def(
      "trace_thread_wait",
      [events](std::uint64_t sequence) {
        if (auto* t = events()) t->thread_wait(sequence, now());
      },
      py::arg("sequence"), "A ThreadWait event: this thread joined the ended thread `sequence`.");
  m.def(
      "trace_flushes", [writer] { return writer()->flushes(); }, "Buffer flushes so far (every thread).");
  m.def(
      "trace_buffer_bytes", [writer] { return writer()->buffer_bytes(); }, "The event buffer of each thread, bytes.");
  m.def(
      "close_trace",
      [writer](const std::string& host, const std::string& process) {
        auto d = writer()->close(global(), host, process);
        return py::bytes(d.bytes());
      },
      py::arg("host"), py::arg("process"),
      "Closes this rank's event files (no thread may record any more) and returns its definitions as bytes for "
      "write_trace_archive.");
  m.def(
      "finish_trace",
      [writer](const std::vector<std::uint32_t>& regions, const std::vector<std::uint32_t>& comms) {
        writer()->finish(regions, comms);
      },
      py::arg("regions"), py::arg("comms"),
      "After close_trace: writes every location's local definitions (this rank's region and communicator ids -> "
      "global ones, TraceUnifyState's maps; its clock offsets) beside its event file and closes the rank's archive.");
  m.def(
      "trace_summary",
      [](const py::bytes& definitions) {
        auto d = TraceDefinitions::from_bytes(std::string(definitions));
        d.regions.clear(), d.communicators.clear();
        return py::bytes(d.bytes());
      },
      py::arg("definitions"),
      "close_trace's bytes without regions and communicators: what rank 0 needs of every rank (host, process, "
      "locations, clock) beside the unified definitions.");
  py::class_<TraceUnifyState>(m, "TraceUnifyState",
                              "The trace's definitions reduced along a tree (see trace_writer.hpp): up, each rank "
                              "absorbs its children's unified definitions; down, the maps to the global ones.")
      .def(py::init([](const py::bytes& local) { return std::make_unique<TraceUnifyState>(std::string(local)); }),
           py::arg("local_definitions"), "From this rank's close_trace bytes.")
      .def(
          "absorb", [](TraceUnifyState& s, const py::bytes& child) { s.absorb(std::string(child)); }, py::arg("child"),
          "A child's end_up bytes (children in rank order).")
      .def(
          "end_up", [](const TraceUnifyState& s) { return py::bytes(s.end_up()); },
          "This subtree's unified definitions (at the root: the global ones).")
      .def(
          "down",
          [](TraceUnifyState& s, const py::bytes& message) {
            std::vector<py::bytes> out;
            for (auto& m : s.down(std::string(message))) out.emplace_back(m);
            return out;
          },
          py::arg("message"), "The parent's maps (b'' at the root); returns each child's.")
      .def_property_readonly("region_map", &TraceUnifyState::region_map, "This rank's region ids -> global ids.")
      .def_property_readonly("comm_map", &TraceUnifyState::comm_map, "This rank's communicator ids -> global ids.")
      .def_property_readonly("bytes_received", &TraceUnifyState::bytes_received,
                             "Bytes of definitions and maps this rank received from its children and parent.");
  m.def(
      "write_trace_definitions",
      [](const std::string& directory, const py::bytes& unified, const std::vector<py::bytes>& summaries) {
        std::vector<std::string> parts(summaries.begin(), summaries.end());
        return write_trace_definitions(directory, std::string(unified), parts);
      },
      py::arg("directory"), py::arg("unified"), py::arg("summaries"),
      "Rank 0: the anchor and global definitions of the unified definitions (the root TraceUnifyState's end_up) and "
      "every rank's trace_summary (rank order) in `directory`; the ranks' local definitions and event files belong "
      "in `directory`/traces/. Returns the number of locations.");
  m.def(
      "write_trace_archive",
      [](const std::string& directory, const std::vector<std::string>& parts) {
        return write_trace_archive(directory, parts);
      },
      py::arg("directory"), py::arg("parts"),
      "Rank 0: the anchor, global and local definitions of the ranks' definitions `parts` (close_trace's bytes, in "
      "rank order) in `directory`; the event files belong in `directory`/traces/. Returns the number of locations.");
  m.def(
      "collective_operation", [](const std::string& name) { return collective_operation(name); }, py::arg("name"),
      "OTF2's collective operation of an MPI function name, -1 if it is none.");
  m.def(
      "glob_match", [](const std::string& pattern, const std::string& text) { return glob_match(pattern, text); },
      py::arg("pattern"), py::arg("text"),
      "The filters' pattern match, POSIX fnmatch without flags: * ? [set] and backslash escapes.");
}

}  // namespace cubescale::bindings
