// Attention of T query positions each (a generator's prefill, passes/prefill_attention.py) over
// S keys: q [B x ${H} x T, ${E}] ${q_elem} (batch x heads x positions rows), K transposed and V
// [B x ${KVH}, ${KE}, S x ${KP}] ${q_elem} (f32, or bf16 pairs of the head dim: [h, e, 2j + r] =
// K[h, j, 2e + r]) and [B x ${KVH}, S, ${E}] f32 (batch x K/V heads; head h reads K/V head
// h / ${G}), an additive mask [B, T, S] f32 (-inf: the position is masked); T (%t), B
// (%batch) and S (%keys, a multiple of ${L}) are operands (IREE inlines those that are
// constants). Each workgroup takes a block of ${R} query rows of one head (rows past T repeat the
// last and are not stored) and goes over the keys ${L} at a time, skipping a tile of keys that
// the mask closes to every row of the block (a causal mask's future), with softmax's running
// form (FlashAttention's): per row a running maximum m, sum l and output o, and per tile
//   1. the scores q . k of the block's rows and the tile's keys, f32 FMAs over the head dim in
//      order (bf16 q and K: vdpbf16ps over its pairs), x ${factor} + mask; -inf at masked
//      positions (their keys' values unused);
//   2. m' = max(m, the tile's scores) (x86's max: a tree of selects on ogt), the tile's
//      exp(score - m'), l = l exp(m - m') + their sum (exp(m - m') only where m grew: else 1);
//   3. o = o exp(m - m') + the sum of exp x v over the tile's keys by f32 FMAs, ${U} rows a
//      step (each V row loaded once for them; no branch: a row still closed to every key takes
//      its exps from 0, all 0).
// Each row's output is o / l; a row whose positions are all masked is 0, as torch's SDPA gives
// (its "safe" softmax). A masked position's value is multiplied by 0, as the decomposition's.
stream.executable private @${exe} {
  stream.executable.export public @${fn} workgroups(%n: index) -> (index, index, index) {
    %c1 = arith.constant 1 : index
    stream.return %n, %c1, %c1 : index, index, index
  }
  builtin.module {
    func.func @${fn}(%q_binding: !stream.binding, %kt_binding: !stream.binding,
                     %v_binding: !stream.binding, %mask_binding: !stream.binding,
                     %out_binding: !stream.binding, %t: index, %batch: index,
                     %keys: index) {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %cKE = arith.constant ${KE} : index
      %cL = arith.constant ${L} : index
      %cR = arith.constant ${R} : index
      %cR_less = arith.constant ${R_less} : index
      %cU = arith.constant ${U} : index
      %cH = arith.constant ${H} : index
      %cG = arith.constant ${G} : index
      %cKVH = arith.constant ${KVH} : index
      %heads = arith.muli %batch, %cH : index
      %rows = arith.muli %heads, %t : index
      %kv_heads = arith.muli %batch, %cKVH : index
      %c_tiles = arith.divui %keys, %cL : index
      %cKP = arith.constant ${KP} : index
      %kt_len = arith.muli %keys, %cKP : index
      %q = stream.binding.subspan %q_binding[%c0] : !stream.binding -> memref<?x${E}x${q_elem}>{%rows}
      %kt = stream.binding.subspan %kt_binding[%c0] : !stream.binding -> memref<?x${KE}x?x${q_elem}>{%kv_heads, %kt_len}
      %v = stream.binding.subspan %v_binding[%c0] : !stream.binding -> memref<?x?x${E}xf32>{%kv_heads, %keys}
      %mask = stream.binding.subspan %mask_binding[%c0] : !stream.binding -> memref<?x?x?xf32>{%batch, %t, %keys}
      %out = stream.binding.subspan %out_binding[%c0] : !stream.binding -> memref<?x${E}xf32>{%rows}
      %qs = memref.alloca() : memref<${R}x${KE}x${qs_elem}>
      %os = memref.alloca() : memref<${R}x${E}xf32>
      %tile = memref.alloca() : memref<${R}x${L}xf32>
      %ps = memref.alloca() : memref<${U}x${L}xf32>
      %ms = memref.alloca() : memref<${R}xf32>
      %ls = memref.alloca() : memref<${R}xf32>
      %t_up = arith.addi %t, %cR_less : index
      %blocks = arith.divui %t_up, %cR : index
      %id = hal.interface.workgroup.id[0] : index
      %bh = arith.divui %id, %blocks : index
      %block = arith.remui %id, %blocks : index
      %t0 = arith.muli %block, %cR : index
      %t_last = arith.subi %t, %c1 : index
      %base = arith.muli %bh, %t : index
      %b = arith.divui %bh, %cH : index
      %h = arith.remui %bh, %cH : index
      %kvh = arith.divui %h, %cG : index
      %bk0 = arith.muli %b, %cKVH : index
      %bk = arith.addi %bk0, %kvh : index
      %neg_inf = arith.constant 0xFF800000 : f32
      %zero = arith.constant 0.0 : f32
      %one = arith.constant 1.0 : f32
      %false = arith.constant false
      %zero_e = arith.constant dense<0.0> : vector<${E}xf32>
      %zero_l = arith.constant dense<0.0> : vector<${L}xf32>
      %neg_inf_l = arith.constant dense<0xFF800000> : vector<${L}xf32>
      %factor_l = arith.constant dense<${factor}> : vector<${L}xf32>
      scf.for %i = %c0 to %cR step %c1 {
        %ti_all = arith.addi %t0, %i : index
        %ti = arith.minui %ti_all, %t_last : index
        %row = arith.addi %base, %ti : index
${q_stage}
        vector.store %zero_e, %os[%i, %c0] : memref<${R}x${E}xf32>, vector<${E}xf32>
        memref.store %neg_inf, %ms[%i] : memref<${R}xf32>
        memref.store %zero, %ls[%i] : memref<${R}xf32>
      }
      scf.for %tile_index = %c0 to %c_tiles step %c1 {
        %j0 = arith.muli %tile_index, %cL : index
        %open_any = scf.for %i = %c0 to %cR step %c1 iter_args(%any = %false) -> (i1) {
          %ti_all = arith.addi %t0, %i : index
          %ti = arith.minui %ti_all, %t_last : index
          %mk = vector.load %mask[%b, %ti, %j0] : memref<?x?x?xf32>, vector<${L}xf32>
          %open = arith.cmpf une, %mk, %neg_inf_l : vector<${L}xf32>
          %some = vector.reduction <or>, %open : vector<${L}xi1> into i1
          %grown = arith.ori %any, %some : i1
          scf.yield %grown : i1
        }
        scf.if %open_any {
          %jk = arith.muli %j0, %cKP : index
          %acc:${R} = scf.for %e = %c0 to %cKE step %c1 iter_args(${acc_args}) -> (${acc_types}) {
            %ktv = vector.load %kt[%bk, %e, %jk] : memref<?x${KE}x?x${q_elem}>, vector<${KL}x${q_elem}>
${fma_rows}
            scf.yield ${acc_next} : ${acc_types}
          }
${tile_stores}
          scf.for %i0 = %c0 to %cR step %cU {
${rows}
            %o_all:${U} = scf.for %j = %c0 to %cL step %c1 iter_args(${pv_args}) -> (${pv_types}) {
              %key = arith.addi %j0, %j : index
              %v_row = vector.load %v[%bk, %key, %c0] : memref<?x?x${E}xf32>, vector<${E}xf32>
${pv}
              scf.yield ${pv_next} : ${pv_types}
            }
${o_stores}
          }
        }
      }
      scf.for %i = %c0 to %cR step %c1 {
        %ti = arith.addi %t0, %i : index
        %inside = arith.cmpi ult, %ti, %t : index
        scf.if %inside {
          %row = arith.addi %base, %ti : index
          %l = memref.load %ls[%i] : memref<${R}xf32>
          %o = vector.load %os[%i, %c0] : memref<${R}x${E}xf32>, vector<${E}xf32>
          %l_e = vector.broadcast %l : f32 to vector<${E}xf32>
          %quotient = arith.divf %o, %l_e : vector<${E}xf32>
          %none_open = arith.cmpf oeq, %l, %zero : f32
          %result = arith.select %none_open, %zero_e, %quotient : vector<${E}xf32>
          vector.store %result, %out[%row, %c0] : memref<?x${E}xf32>, vector<${E}xf32>
        }
      }
      return
    }
  }
}
