"""Every change the boot makes inside pydevd and debugpy, declared once: its feature, the names it reads or replaces,
the Pythons it is for and the debugpy versions it is proven on.

A feature is switched on when the module named ``after`` has been imported, and only if every one of its ``names``
is there as declared (``changes.check``); otherwise stock pydevd does its job, slower, and the relay is told why.
A name is written ``module: (path, ...)``:

- ``PyDB.set_suspend``: an attribute, reached from the module;
- ``PyDB.set_trace_for_frame_and_parents(self, thread_ident, frame)``: a function whose first parameters are these
  (checked where the function has Python code; compiled ones are checked by name only);
- ``PyDB().breakpoints``: an attribute of instances, set by the class's ``__init__`` or declared on the class;
- ``mark_thread_suspended().stop_reason``: an attribute a function sets on what it is given (``thread.stop_reason``),
  checked among the names of its code (compiled functions by name only);
- a name written ``?name`` is optional: the feature looks before it uses it (``hasattr``), so its absence leaves the
  feature on (an older debugpy); where it is there it is checked as any other;
- a module written ``?module`` is checked only where it is loaded (one of a pair: pydevd's compiled or Python tracer).

This file is data only: the boot loads it in the target (any Python from 3.8), the relay imports it for the doctor,
the docs and the tests. ``OLDEST``..``NEWEST`` is the debugpy range the tests prove every feature on; ``pyproject.toml``
asks for it, and a target whose debugpy is outside it is lent ``NEWEST`` (``lending.py``).
"""

OLDEST = "1.8.8"  # the oldest debugpy on which every feature is proven (make test: tests/test_debugpy_versions.py)
NEWEST = "1.8.22"  # the newest


class Feature:
    """One change inside pydevd or debugpy: what it is for, what it needs, when it is made."""

    __slots__ = ("name", "module", "after", "names", "what", "off", "pythons", "needs", "setting", "process", "proven")

    def __init__(self, name, module, after, names, what, off, pythons=((3, 8), None), needs=(), setting=None,
                 process="target", proven=(OLDEST, NEWEST)):
        self.name = name  # stable: the relay's warnings, the doctor and the docs name it so
        self.module = module  # boot/<module>.py, whose apply(change, boot) makes the change
        self.after = after  # the module whose import switches it on
        self.names = names  # module -> the names it reads or replaces there
        self.what = what  # what it does, in one sentence
        self.off = off  # what the user sees while it is off
        self.pythons = pythons  # (oldest, first not) target Python versions it is for
        self.needs = needs  # features that must be on for it to be
        self.setting = setting  # the boot setting that asks for it (None: always)
        self.process = process  # where it is made: "target" (the boot), or "launcher" (debugpy's, _launcher_boot.py)
        self.proven = proven  # the oldest and newest debugpy the tests prove it on (tests/test_debugpy_versions.py)

    def for_python(self, version):  # noqa: ANN001, ANN201 - (major, minor) -> bool; this file runs on 3.8
        oldest, first_not = self.pythons
        return oldest <= tuple(version[:2]) and (first_not is None or tuple(version[:2]) < first_not)


PYDB_FLAGS = ("PyDB().breakpoints", "PyDB().function_breakpoint_name_to_breakpoint",
              "PyDB().break_on_caught_exceptions", "PyDB().break_on_user_uncaught_exceptions",
              "PyDB().has_plugin_line_breaks", "PyDB().has_plugin_exception_breaks")
WRITER = {"_pydevd_bundle.pydevd_comm": ("WriterThread.add_command(self, cmd)",)}  # PyDB().writer's
MESSAGES = {  # what every message of the boot to the relay goes through
    "pydevd": ("get_global_debugger", "PyDB().writer"),
    "_pydevd_bundle.pydevd_comm": WRITER["_pydevd_bundle.pydevd_comm"] + ("WriterThread.empty(self)",),
    "_pydevd_bundle.pydevd_comm_constants": ("CMD_PROCESS_EVENT",),
    "_pydevd_bundle.pydevd_net_command": ("NetCommand",),
}



def joined(*parts):  # noqa: ANN002, ANN201 - dicts of module -> names, merged (a module's names from every part)
    names = {}
    for part in parts:
        for module, found in part.items():
            names[module] = names.get(module, ()) + tuple(found)
    return names


FEATURES = (
    Feature(
        "relay_messages", "relay_messages", "pydevd",
        joined(MESSAGES, {"pydevd": ("PyDB.on_configuration_done(self)",)}),
        "The boot tells the relay what it switched on and when the target's start phases ended "
        "(relayFeatures, relayStartup), before the launch answers.",
        "nothing else is switched on: the target runs stock debugpy, and the relay says it got no report"),
    Feature(
        "quiet_log", "quiet_log", "debugpy.common.log",
        {"debugpy.common.log": ("describe_environment(header)", "_exception", "_levels")},
        "debugpy describes the environment and formats a logged exception only when a log takes its level.",
        "every launch reads every installed distribution's metadata (0.5 s in a venv of 150 packages)"),
    Feature(
        "pydevd_waits", "pydevd_waits", "pydevd",
        {"pydevd": ("PyDB.initialize_network(self, sock)", "time", "threading", "ThreadingEvent",
                    "PyDB._PyDB__wait_for_threads_to_finish(self, timeout)", "PyDB().check_alive_thread",
                    "CheckAliveThread()._wait_event", "get_global_debugger", "PyDB().writer"),
         "threading": ("_register_atexit",)},
        "pydevd's 0.1 s pause at the start and its 0.7 s of waits at the end are left out.",
        "each launch takes 0.1 s more to start and 0.7 s more to end", pythons=((3, 9), None)),  # _register_atexit
    Feature(
        "wake_every_command", "wake_every_command", "pydevd",
        {"pydevd": ("PyDB.get_internal_queue_and_event(self, thread_id)",)},
        "A stopped thread answers every command posted to it at once, not one per 0.2 s.",
        "requests sent together to a stopped thread (an evaluate and a stack) wait 0.2 s each"),
    Feature(
        "slow_values", "slow_values", "pydevd",
        joined({"_pydevd_bundle.pydevd_suspended_frames": (
                    "_AbstractVariable.get_var_data(self)", "_AbstractVariable().py_db", "_AbstractVariable().name",
                    "_AbstractVariable().evaluate_name"),
                "_pydev_bundle._pydev_saved_modules": ("ThreadingEvent",),
                "_pydevd_bundle.pydevd_daemon_thread": (
                    "PyDBDaemonThread.__init__(self, py_db)", "PyDBDaemonThread._on_run",
                    "PyDBDaemonThread()._kill_received")},
               MESSAGES),
        "A value whose text takes over a second to make (a slow __repr__) is named to the relay.",
        "a variables or evaluate request that runs out of time cannot say which value held it"),
    Feature(
        "code_lines_cache", "code_lines", "pydevd",
        {"_pydevd_bundle.pydevd_api": ("_get_code_lines(code)",)},
        "The code lines of a big breakpoint file are kept between launches, not compiled at each.",
        "each launch compiles every breakpoint file of 16 KB or more to check its lines"),
    Feature(
        "module_path", "module_path", "pydevd",
        {"_pydevd_bundle.pydevd_runpy": ("_run_module_as_main(mod_name)",)},
        "python -m runs with the working directory's full path first on sys.path, as a plain run does.",
        "a module run with -m that changes its working directory imports from the new one"),
    Feature(
        "gc_freeze", "gc_freeze", "pydevd",
        {"_pydevd_bundle.pydevd_runpy": ("_run_code(code, run_globals)",)},
        "The objects the interpreter and the debugger made before the program starts are left out of its "
        "garbage collections.",
        "each full collection of the program also walks the debugger's 13,000 objects"),
    Feature(
        "exit_is_an_end", "exit_is_an_end", "pydevd",
        {"pydevd": ("PyDB.ignore_system_exit_code(self, system_exit_exc)",)},
        "sys.exit with a number or None ends the program, never stops it as an exception.",
        "sys.exit(N) with N other than 0 stops as an uncaught exception before the program ends"),
    Feature(
        "pending_breakpoints", "pending_breakpoints", "pydevd",
        joined({"pydevd": ("PyDB().api_received_breakpoints",) + PYDB_FLAGS[:1],
                "_pydevd_bundle.pydevd_api": ("PyDevdAPI.add_breakpoint(self, py_db)",
                                              "PyDevdAPI._AddBreakpointResult().error_code",
                                              "PyDevdAPI._AddBreakpointResult().translated_line"),
                "pydevd_file_utils": ("canonical_normalized_path(filename)",)}, MESSAGES),
        "A breakpoint in a file that did not exist at launch binds as its module is first read.",
        "such a breakpoint stays unverified, and never stops"),
    Feature(
        "uncaught_recursion", "uncaught_recursion", "pydevd",
        {"pydevd": ("PyDB().set_additional_thread_info", "get_global_debugger"),
         "_pydevd_bundle.pydevd_additional_thread_info": ("PyDBAdditionalThreadInfo().suspended_at_unhandled",
                                                          "PyDBAdditionalThreadInfo().is_tracing"),
         "_pydevd_bundle.pydevd_breakpoints": ("stop_on_unhandled_exception(py_db, thread, additional_info, arg)",)},
        "An uncaught RecursionError, which ends pydevd's own tracing, still stops the program.",
        "a program ended by an uncaught RecursionError exits without a stop", pythons=((3, 8), (3, 12))),
    Feature(
        "free_children", "free_children", "pydevd",
        joined({"pydevd_tracing": ("restore_sys_set_trace_func()",), "os": ("fork", "register_at_fork")}, MESSAGES),
        "A child the program forks runs free of the debugger, and the relay is told its pid.",
        "a forked child keeps the debugger's tracing, and a breakpoint it reaches can hang it",
        setting="free_children"),
    Feature(
        "stack_with_stops", "stack_with_stops", "_pydevd_bundle.pydevd_net_command_factory_json",
        {"_pydevd_bundle.pydevd_net_command_factory_json": (
            "NetCommandFactoryJson.make_thread_suspend_message(self, py_db, thread_id)",
            "NetCommandFactoryJson.make_get_thread_stack_message(self, py_db, seq, thread_id, topmost_frame, fmt, "
            "must_be_suspended, start_frame, levels)"),
         "_pydevd_bundle._debug_adapter.pydevd_base_schema": ("BaseSchema._translate_id_to_dap",),
         "_pydevd_bundle.pydevd_net_command": ("NetCommand", "NULL_NET_COMMAND", "NetCommand().as_dict"),
         "_pydevd_bundle.pydevd_comm_constants": ("CMD_PROCESS_EVENT",)},
        "A stopping thread sends its top frame with the stop: the relay shows it without asking.",
        "each stop takes one more round trip (a stackTrace request) before it is shown",
        setting="stack_with_stops"),
    Feature(
        "thread_visits", "thread_visits", "pydevd",
        {"pydevd": ("PyDB.do_wait_suspend(self, thread, frame, event, arg)",
                    "PyDB.get_internal_queue_and_event(self, thread_id)", "get_global_debugger",
                    "PyDB.threads_suspended_single_notification", "PyDB.multi_threads_single_notification",
                    "ThreadsSuspendedSingleNotification._callbacks",
                    "ThreadsSuspendedSingleNotification._callbacks_lock"),
         "_pydevd_bundle.pydevd_api": ("PyDevdAPI.request_resume_thread(self, thread_id)",),
         "_pydevd_bundle.pydevd_constants": ("get_current_thread_id(thread)",),
         "_pydevd_bundle.pydevd_thread_lifecycle": ("mark_thread_suspended().stop_reason",),
         "_pydevd_bundle._debug_adapter.pydevd_base_schema": ("BaseSchema._translate_id_to_dap",),
         "_pydevd_bundle.pydevd_comm_constants": ("CMD_SET_BREAK", "CMD_SET_FUNCTION_BREAK")},
        "The relay asks which threads are suspended and which hit their own breakpoint, each suspension numbered, "
        "and a resume wakes them at once: a hit is reported once, a continue never resumes a thread suspended since "
        "the relay looked, and a stop does not wait on threads blocked in a call of C.",
        "a thread still leaving the previous stop can be reported at its breakpoint again, a thread that reaches "
        "its breakpoint just as a continue is sent can run on unreported, resumed threads go on 0.2 s late, and "
        "each stop waits 0.5 s for every thread blocked in a call of C (a join, a sleep)",
        needs=("relay_messages",)),
    Feature(
        "awaiter_steps", "awaiter_steps", "pydevd",
        {"pydevd": ("PyDB.do_wait_suspend(self, thread, frame, event, arg)",
                    "PyDB.set_trace_for_frame_and_parents(self, thread_ident, frame)"),
         "_pydevd_bundle.pydevd_additional_thread_info": (
             "set_additional_thread_info", "PyDBAdditionalThreadInfo().pydev_step_cmd",
             "PyDBAdditionalThreadInfo().pydev_step_stop"),
         "_pydevd_bundle.pydevd_comm_constants": ("CMD_STEP_OVER", "CMD_STEP_OVER_MY_CODE"),
         "_pydevd_bundle.pydevd_constants": ("PYDEVD_USE_SYS_MONITORING",)},
        "A step out of an asyncio task's own coroutine stops in the coroutine that awaits the task, at the first line "
        "it runs once the task is done.",
        "a step out of a task's own coroutine stops at the next line the program runs anywhere (another task's, or "
        "the line after asyncio.run)", pythons=((3, 11), None)),
    Feature(
        "monitoring_filter", "monitoring_filter", "pydevd",
        {"_pydevd_sys_monitoring.pydevd_sys_monitoring": ("update_monitor_events",),
         "?_pydevd_sys_monitoring._pydevd_sys_monitoring_cython": ("update_monitor_events", "sys"),
         "?_pydevd_sys_monitoring._pydevd_sys_monitoring": ("update_monitor_events", "_getframe"),
         "_pydevd_bundle.pydevd_additional_thread_info": ("any_thread_stepping()",),
         "_pydevd_bundle.pydevd_breakpoints": ("get_exception_breakpoint(exctype, exceptions)",),
         "_pydevd_bundle.pydevd_constants": ("?IS_PY313_OR_GREATER",),
         "pydevd_file_utils": ("canonical_normalized_path(filename)",),
         "pydevd": ("get_global_debugger",) + PYDB_FLAGS},
        "Only a breakpoint's line calls pydevd back; other lines and calls run at plain speed.",
        "every line of a function holding a breakpoint calls pydevd (50-80x slower there)",
        pythons=((3, 12), None)),
    Feature(
        "pause_in_steps", "pause_in_steps", "pydevd",
        {"_pydevd_sys_monitoring.pydevd_sys_monitoring": ("enable_code_tracing(thread_ident, code, frame)",),
         "_pydevd_bundle.pydevd_additional_thread_info": ("set_additional_thread_info().additional_info",
                                                          "PyDBAdditionalThreadInfo().pydev_state"),
         "_pydevd_bundle.pydevd_constants": ("STATE_SUSPEND",)},
        "A pause asked while a step over or out still runs stops the thread.",
        "a pause during a long step over waits until the step ends", pythons=((3, 12), None)),
    Feature(  # before lazy_tracing: its hooks then see the code and the breakpoints this leaves to pydevd
        "compiled_breakpoints", "compiled_breakpoints", "pydevd",
        {"pydevd": ("PyDB.consolidate_breakpoints(self, canonical_normalized_filename, id_to_breakpoint, "
                    "file_to_line_to_breakpoints)", "PyDB.on_breakpoints_changed(self, removed)",
                    "PyDB.handle_breakpoint_condition(self, info, pybreakpoint, new_frame)",
                    "PyDB._internal_get_file_type(self, abs_real_path_and_basename)",
                    "PyDB.set_suspend(self, thread, stop_reason, suspend_other_threads)",
                    "PyDB.do_wait_suspend(self, thread, frame, event, arg)",
                    "PyDB.set_trace_for_frame_and_parents(self, thread_ident, frame)", "PyDB().breakpoints",
                    "PyDB().file_to_id_to_line_breakpoint", "PyDB().skip_print_breakpoint_exception",
                    "PyDB().skip_suspend_on_breakpoint_exception", "PyDB().cmd_factory",
                    "get_global_debugger") + MESSAGES["pydevd"],
         "_pydevd_bundle.pydevd_breakpoints": (
             "LineBreakpoint().line", "LineBreakpoint().condition", "LineBreakpoint().hit_condition",
             "LineBreakpoint().expression", "LineBreakpoint().is_logpoint", "LineBreakpoint().func_name",
             "LineBreakpoint().suspend_policy", "LineBreakpoint().breakpoint_id"),
         "_pydevd_bundle.pydevd_additional_thread_info": (
             "set_additional_thread_info", "PyDBAdditionalThreadInfo().conditional_breakpoint_exception",
             "PyDBAdditionalThreadInfo().is_tracing",
             "PyDBAdditionalThreadInfo().trace_suspend_type",
             "?PyDBAdditionalThreadInfo().hit_breakpoint_ids"),  # debugpy 1.8.22 on: the hit's id told with its stop
         "_pydevd_bundle.pydevd_api": ("PyDevdAPI.send_error_message(self, py_db, msg)",),
         "_pydevd_bundle.pydevd_dont_trace_files": ("PYDEV_FILE",),
         "_pydevd_bundle.pydevd_net_command_factory_json": ("NetCommandFactoryJson.make_io_message(self, msg, ctx)",),
         "_pydevd_bundle.pydevd_comm_constants": ("CMD_SET_BREAK", "CMD_STEP_INTO", "CMD_STEP_INTO_MY_CODE",
                                                  "CMD_STEP_INTO_COROUTINE", "CMD_SMART_STEP_INTO", "CMD_STEP_OVER",
                                                  "CMD_STEP_OVER_MY_CODE", "CMD_STEP_RETURN",
                                                  "CMD_STEP_RETURN_MY_CODE"),
         "_pydevd_bundle.pydevd_thread_lifecycle": ("mark_thread_suspended().stop_reason",),
         "_pydevd_bundle.pydevd_constants": ("PYDEVD_USE_SYS_MONITORING",),
         "_pydevd_bundle.pydevd_runpy": ("_get_code_from_file(run_name, fname)",),
         "pydevd_file_utils": ("canonical_normalized_path(filename)",), **WRITER},
        "A breakpoint's condition, hit count and log message are compiled into the program's code as its file is "
        "read: a pass of the line costs an if, and only a true test calls the debugger.",
        "a breakpoint with a condition, a hit count or a log message calls the debugger at every pass of its line "
        "(11-16 us each: a loop of one second takes half a minute)", pythons=((3, 11), None)),
    Feature(
        "watched_breakpoints", "watched_breakpoints", "pydevd",
        {"pydevd": ("PyDB().breakpoints", "PyDB().file_to_id_to_line_breakpoint",
                    "PyDB.set_suspend(self, thread, stop_reason)",
                    "PyDB.do_wait_suspend(self, thread, frame, event, arg)"),
         "_pydevd_bundle.pydevd_breakpoints": ("LineBreakpoint().line",),
         "_pydevd_bundle.pydevd_additional_thread_info": ("set_additional_thread_info",
                                                          "PyDBAdditionalThreadInfo().pydev_step_cmd"),
         "pydevd_file_utils": ("canonical_normalized_path(filename)",)},
        "A condition, hit count or log message set on code already running is checked by a callback of its one "
        "line, compiled once; only a true test calls the debugger (a step that lands there stops once).",
        "a breakpoint with a condition, a hit count or a log message set while its code runs calls the debugger at "
        "every pass of its line (11-16 us each)", pythons=((3, 12), None), needs=("compiled_breakpoints",)),
    Feature(
        "lazy_tracing", "lazy_tracing", "pydevd",
        {"pydevd_tracing": ("SetTrace(tracing_func)", "set_trace_to_threads(tracing_func, thread_idents, "
                            "create_dummy_thread)", "_last_tracing_func_thread_local", "SetTrace().tracing_func"),
         "pydevd": ("PyDB.on_breakpoints_changed(self, removed)", "PyDB.set_suspend(self, thread, stop_reason)",
                    "PyDB.do_wait_suspend(self, thread, frame, event, arg)", "PyDB.patch_threads(self)",
                    "PyDB.set_trace_for_frame_and_parents(self, thread_ident, frame)",
                    "PyDB.set_tracing_for_untraced_contexts(self)", "PyDB().set_additional_thread_info",
                    "PyDB().threading_active", "PyDB().trace_dispatch", "settrace", "get_global_debugger")
         + PYDB_FLAGS,
         "_pydevd_bundle.pydevd_api": ("PyDevdAPI.stop_on_entry(self)",),
         "_pydevd_bundle.pydevd_runpy": ("_get_code_from_file(run_name, fname)",),
         "_pydevd_bundle.pydevd_breakpoints": ("stop_on_unhandled_exception(py_db, thread, additional_info, arg)",),
         "_pydevd_bundle.pydevd_constants": ("STATE_SUSPEND",),
         "_pydevd_bundle.pydevd_additional_thread_info": (
             "set_additional_thread_info().additional_info", "PyDBAdditionalThreadInfo().pydev_step_cmd",
             "PyDBAdditionalThreadInfo().pydev_state", "PyDBAdditionalThreadInfo().suspended_at_unhandled"),
         "_pydevd_bundle.pydevd_daemon_thread": ("mark_as_pydevd_daemon_thread().pydev_do_not_trace",
                                                 "mark_as_pydevd_daemon_thread().is_pydev_daemon_thread"),
         "pydevd_file_utils": ("canonical_normalized_path(filename)",)},
        "Nothing is traced until the code of a breakpoint runs; a stop traces everything until the next continue.",
        "every call of every thread is traced (a test suite runs 2-3x slower)", pythons=((3, 11), (3, 12))),
    Feature(
        "lazy_tracing_pytest", "lazy_tracing_pytest", "_pytest.assertion.rewrite",
        {"_pytest.assertion.rewrite": ("_read_pyc", "_rewrite_test")},
        "Test files that pytest rewrites get the breakpoint call as they load.",
        "a test file holding a breakpoint is traced whole from its first line", pythons=((3, 11), (3, 12)),
        needs=("lazy_tracing",)),
    Feature(  # after lazy_tracing: its SetTrace is wrapped here, so the trace functions lazy_tracing keeps are these
        "exception_lines", "exception_lines", "pydevd",
        {"pydevd_tracing": ("SetTrace(tracing_func)",),
         "pydevd": ("PyDB.set_trace_for_frame_and_parents(self, thread_ident, frame)", "get_global_debugger",
                    "PyDB().break_on_caught_exceptions", "PyDB().break_on_user_uncaught_exceptions",
                    "PyDB().has_plugin_exception_breaks", "PyDB().trace_dispatch"),
         "_pydevd_bundle.pydevd_daemon_thread": ("mark_as_pydevd_daemon_thread(thread)",),
         "?_pydevd_bundle.pydevd_cython": ("PyDBFrame.trace_exception", "SafeCallWrapper.get_method_object"),
         "?_pydevd_bundle.pydevd_frame": ("PyDBFrame.trace_exception(self, frame, event, arg)",)},
        "A frame pydevd traces only for its exceptions (exception breakpoints on raised exceptions, no breakpoint and "
        "no step in it) gets no line events; pydevd's own setting of tracing on running frames turns them back on.",
        "with exception breakpoints on raised exceptions, every line of every function calls the debugger (a loop "
        "that raises and catches runs 14x slower, not 5x)", pythons=((3, 11), (3, 12))),
    Feature(
        "launcher_token", "launcher_token", "debugpy.launcher.debuggee",
        {"debugpy.launcher.debuggee": ("spawn(process_name, cmdline, env, redirect_output)",)},
        "debugpy's launcher (a launch with subprocess=True) hands the target its secret in the environment, never "
        "on its command line, which every local user can read.",
        "such a launch is refused, rather than put the secret on the target's command line",
        process="launcher"),
)
BY_NAME = {feature.name: feature for feature in FEATURES}
# Made before debugpy is imported, with nothing of it to check yet: the standard modules pydevd imports but a launch
# never uses run at their first use, and pydevd's bytecode analysis at its first use (boot/deferred_imports.py).
# Any attribute read of a stand-in runs the real module, so a debugpy that uses them otherwise loses nothing.
AT_START = ("deferred_imports",)


def version_tuple(text):  # noqa: ANN001, ANN201 - "1.8.11" -> (1, 8, 11); this file runs on 3.8
    parts = []
    for part in str(text).split("."):
        digits = "".join(c for c in part if c.isdigit()) if part[:1].isdigit() else ""
        if not digits:
            break
        parts.append(int(digits))
    return tuple(parts)


def in_range(version):  # noqa: ANN001, ANN201 - a debugpy version text -> bool
    """Whether a debugpy version is one the tests prove (``OLDEST`` to the next minor release)."""
    found, oldest = version_tuple(version), version_tuple(OLDEST)
    return oldest <= found and found[:2] == oldest[:2]
