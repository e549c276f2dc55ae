"""Writing checkpoints other tools load: ``compressed_tensors.py``."""
