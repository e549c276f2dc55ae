// quantize (per-tensor FP8): data = cast(x * scale) with the integer-only encoder of
// encode_fp8.mlir, scale_inv = 1 / scale. scale_inv goes out through compute_barrier.start:
// IREE would otherwise fuse the scalar's reciprocal (an f64 divide) into each consumer's
// elementwise loop and recompute it for every element (a dynamic MiniLM's GEMM epilogues,
// benchmarks/RESULTS.md); the barrier leaves no wait in the host program.
func.func private @${name}(%x: tensor<${shape}xf32>, %scale: tensor<f32>)
    -> (tensor<${shape}xi8>, tensor<f32>) attributes {${attrs}} {${x_dims}
  %empty = tensor.empty(${sizes}) : tensor<${shape}xi8>
  %data = linalg.generic {
      indexing_maps = [affine_map<(${dims}) -> (${dims})>, affine_map<(${dims}) -> ()>,
                       affine_map<(${dims}) -> (${dims})>],
      iterator_types = [${parallels}]}
      ins(%x, %scale : tensor<${shape}xf32>, tensor<f32>) outs(%empty : tensor<${shape}xi8>) {
  ^bb0(%xv: f32, %s: f32, %out: i8):
${encode}
    linalg.yield %byte : i8
  } -> tensor<${shape}xi8>
  %empty_s = tensor.empty() : tensor<f32>
  %scale_inv = linalg.generic {
      indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []}
      ins(%scale : tensor<f32>) outs(%empty_s : tensor<f32>) {
  ^bb0(%s: f32, %out: f32):
${reciprocal}
    linalg.yield %result : f32
  } -> tensor<f32>
  %scale_inv_once = iree_tensor_ext.compute_barrier.start %scale_inv : tensor<f32> -> tensor<f32>
  return %data, %scale_inv_once : tensor<${shape}xi8>, tensor<f32>
}
