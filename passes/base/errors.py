"""The one exception type users see: its message is a single line naming the problem."""


class QmlirError(Exception):
    """A user-facing error: bad input, an unsupported model, a failed stage.

    The CLI prints ``qmlir: error: <message>`` and exits non-zero; ``--debug`` shows the traceback.
    """


def exception_summary(e: BaseException) -> str:
    """``Type: first line of the message`` (the type alone when there is no message)."""
    text = str(e).strip()
    return f"{type(e).__name__}: {text.splitlines()[0]}" if text else type(e).__name__
