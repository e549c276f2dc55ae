"""The bottom layer: errors, numbers, option parsing, files and the artifact ABI's names.

Nothing here imports torch or ``iree.compiler``: the runtime uses it too.
"""
