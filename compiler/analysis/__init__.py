"""Analysis: how close a quantized model, layer or operand is to f32, and the report that
shows it."""
