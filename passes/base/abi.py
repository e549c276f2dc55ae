"""The names a compiled artifact and the runtime agree on (no MLIR needed to read them)."""

ENTRY = "main"  # the model's function
DECODE = "decode"  # a generator's @main with one token a call (passes/add_decode_step.py)
METADATA_KEY = "qmlir.metadata"  # JSON in ``iree.reflection`` on @main
GET_STATE = "qmlir.get_scaling_state"  # -> each state global, in metadata order
SET_STATE = "qmlir.set_scaling_state"  # (each state global)
APPLY_UPDATE = "qmlir.apply_update"  # a training step's optimizer update, after @main
GET_TRAIN_STATE = "qmlir.get_train_state"  # -> each parameter, then each optimizer state
SET_TRAIN_STATE = "qmlir.set_train_state"  # (each parameter, then each optimizer state)
GET_GRADIENTS = "qmlir.get_gradients"  # -> the last step's gradient of each parameter
GET_PROBES = "qmlir.get_probes"  # -> each probed GEMM's operands and result (tests' hook)
GET_BUFFERS = "qmlir.get_buffers"  # -> each buffer the model mutates, in metadata order
SET_BUFFERS = "qmlir.set_buffers"  # (each buffer): also how the runtime initializes them
INITIAL_BUFFERS = "qmlir.initial_buffers"  # -> each buffer whose initial value is not zeros
# the start of a ``torch.runtime.assert`` message of ``check-indices``: an index the model
# computed is outside its table (the runtime raises the rest of the message as a QmlirError)
INDEX_CHECK = "qmlir index check: "
