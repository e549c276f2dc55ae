"""The IREE backend and the artifact: ``iree-compile`` with its repro on failure, the
artifact's metadata, and what its weights weigh."""
