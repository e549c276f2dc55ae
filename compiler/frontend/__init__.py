"""Model sources and export, stages 1-2: a model file or ``.pt2`` becomes an
``ExportedProgram`` (``export``), then torch-dialect MLIR (``importer``); a training step's
capture of forward, backward and optimizer update; what the artifact says of each input."""

from compiler.frontend.import_noise import quiet_known_import_noise

quiet_known_import_noise()  # before any model file builds a transformers model
