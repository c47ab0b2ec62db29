"""Feature ``stack_with_stops``: once a stopped thread's frames are tracked, it sends its top frame (``relayStack``,
the body of a ``stackTrace`` answer for one level, plus ``threadId``): the relay shows a stop without asking for
it, a round trip less."""


def apply(change, boot) -> None:  # noqa: ANN001 - changes.Changes, the boot module
    BaseSchema = change.module("_pydevd_bundle._debug_adapter.pydevd_base_schema").BaseSchema  # noqa: N806
    CMD_PROCESS_EVENT = change.module("_pydevd_bundle.pydevd_comm_constants").CMD_PROCESS_EVENT  # noqa: N806
    net_command = change.module("_pydevd_bundle.pydevd_net_command")
    NetCommand, NULL_NET_COMMAND = net_command.NetCommand, net_command.NULL_NET_COMMAND  # noqa: N806

    factory_class = change.module("_pydevd_bundle.pydevd_net_command_factory_json").NetCommandFactoryJson
    per_thread_message = factory_class.make_thread_suspend_message

    def make_thread_suspend_message(self, py_db, thread_id, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        message = per_thread_message(self, py_db, thread_id, *args, **kwargs)
        if message is not NULL_NET_COMMAND:  # pydevd sends a stop per thread itself (not the case under DAP)
            return message
        try:
            stack = self.make_get_thread_stack_message(py_db, 0, thread_id, None, None, must_be_suspended=True,
                                                       levels=1)
            body = {**stack.as_dict["body"], "threadId": BaseSchema._translate_id_to_dap(thread_id)}
        except Exception:  # the stop goes on without it: the relay then asks for the stack
            return message
        return NetCommand(CMD_PROCESS_EVENT, 0, {"type": "event", "event": "relayStack", "body": body}, is_json=True)

    change.replace(factory_class, "make_thread_suspend_message", make_thread_suspend_message)
