// The IREE device target for CUDA sm_90 (`qmlir compile --target cuda --cuda-arch sm_90`).
// The compile puts it on the module as `hal.device.targets`; `lower-named-ops{target=cuda}`
// gives its `#hal.executable.target` to the hand-written kernels' PTX (runtime_kernels/).
// IREE 3.13's target table has no sm_90: this is sm_89's description with the arch
// changed and 227 KiB of shared memory per workgroup (Hopper); +ptx84 as sm_89 (f8 mma.sync).
module attributes {hal.device.targets = [#hal.device.target<"cuda", [
  #hal.executable.target<"cuda", "cuda-nvptx-fb", {
    iree_codegen.target_info = #iree_gpu.target<arch = "sm_90", features = "+ptx84",
      wgp = <
        compute = fp64|fp32|fp16|int64|int32|int16|int8,
        storage = b64|b32|b16|b8, subgroup = shuffle|arithmetic, dot = dp4xi8toi32,
        mma = [<NV_MMA_SYNC_F32_16x8x16_F16>, <NV_MMA_SYNC_F16_16x8x16_F16>,
          <NV_MMA_SYNC_F32_16x8x16_BF16>, <NV_MMA_SYNC_F32_16x8x32_F8E4M3FN>,
          <NV_MMA_SYNC_F32_16x8x32_F8E5M2>,
          <NV_WMMA_F32_16x16x16_F16>, <NV_WMMA_F16_16x16x16_F16>],
        subgroup_size_choices = [32],
        max_workgroup_sizes = [1024, 1024, 1024],
        max_thread_count_per_workgroup = 1024,
        max_workgroup_memory_bytes = 232448,
        max_workgroup_counts = [2147483647, 65535, 65535]>>}>
]> : !hal.device]} {
}
