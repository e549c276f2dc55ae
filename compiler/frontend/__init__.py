"""Model sources and export, stages 1-2: a model file or ``.pt2`` becomes an
``ExportedProgram`` (``export``), then torch-dialect MLIR (``importer``); a training step's
capture of forward, backward and optimizer update; what the artifact says of each input."""
