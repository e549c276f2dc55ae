"""The one exception type users see: its message is a single line naming the problem."""


class QmlirError(Exception):
    """A user-facing error: bad input, an unsupported model, a failed stage.

    The CLI prints ``qmlir: error: <message>`` and exits non-zero; ``--debug`` shows the traceback.
    """
