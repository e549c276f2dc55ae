"""What ``fuse-quantize-core`` matches and rewrites: block quantize chains (``chains.py``) and
fp8-delayed's cast + amax (``delayed.py``), over calls read through ``calls.py``."""
