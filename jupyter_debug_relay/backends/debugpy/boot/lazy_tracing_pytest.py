"""Feature ``lazy_tracing_pytest`` (Python 3.11): pytest's assertion rewriting reads test modules itself; their code
gets the call of ``lazy_tracing.py`` as they load, as every other module's does."""


def apply(change, boot) -> None:  # noqa: ANN001 - changes.Changes, the boot module
    on_code = boot.beside("lazy_tracing").on_code
    rewrite = change.module("_pytest.assertion.rewrite")
    read_pyc, rewrite_test = rewrite._read_pyc, rewrite._rewrite_test

    def _read_pyc(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        return on_code(read_pyc(*args, **kwargs))

    def _rewrite_test(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        source_hash, code = rewrite_test(*args, **kwargs)
        return source_hash, on_code(code)

    change.replace(rewrite, "_read_pyc", _read_pyc)
    change.replace(rewrite, "_rewrite_test", _rewrite_test)
