// Attention of one query position (a generator's decode step, passes/decode_attention.py) over
// a KV cache read as stored: q [${BH}, ${E}] f32 (batch x heads rows), K and V [${BK}, ${S},
// ${E}] ${kv_elem} (batch x K/V heads; head h reads K/V head h / ${G}), an additive mask [${B},
// ${S}] f32 (-inf: the position is masked). Each workgroup takes one query row:
//   1. each open position's score (q . k) x ${factor} + mask (q . k: products and a sum in
//      f32, its order reassociated), stored in scores [${BH}, ${S}]; -inf at masked positions,
//      whose keys are not read; their maximum;
//   2. exp(score - maximum) in place, ${lanes} lanes a step, and their sum (softmax's
//      numerators and denominator);
//   3. the output: the sum over open positions of (exp / sum) x v, f32 FMAs; masked positions'
//      values are not read (weight 0).
// A row whose positions are all masked (or whose every score is -inf) is 0, as torch's SDPA
// gives (its "safe" softmax). K and V rows
// ${widen_doc}.
stream.executable private @${exe} {
  stream.executable.export public @${fn} workgroups(%n: index) -> (index, index, index) {
    %c1 = arith.constant 1 : index
    stream.return %n, %c1, %c1 : index, index, index
  }
  builtin.module {
    func.func @${fn}(%q_binding: !stream.binding, %k_binding: !stream.binding,
                     %v_binding: !stream.binding, %mask_binding: !stream.binding,
                     %scores_binding: !stream.binding, %out_binding: !stream.binding) {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %cS = arith.constant ${S} : index
      %c_lanes = arith.constant ${lanes} : index
      %cH = arith.constant ${H} : index
      %cG = arith.constant ${G} : index
      %cKVH = arith.constant ${KVH} : index
      %q = stream.binding.subspan %q_binding[%c0] : !stream.binding -> memref<${BH}x${E}xf32>
      %k = stream.binding.subspan %k_binding[%c0] : !stream.binding -> memref<${BK}x${S}x${E}x${kv_elem}>
      %v = stream.binding.subspan %v_binding[%c0] : !stream.binding -> memref<${BK}x${S}x${E}x${kv_elem}>
      %mask = stream.binding.subspan %mask_binding[%c0] : !stream.binding -> memref<${B}x${S}xf32>
      %scores = stream.binding.subspan %scores_binding[%c0] : !stream.binding -> memref<${BH}x${S}xf32>
      %out = stream.binding.subspan %out_binding[%c0] : !stream.binding -> memref<${BH}x${E}xf32>
      %bh = hal.interface.workgroup.id[0] : index
      %b = arith.divui %bh, %cH : index
      %h = arith.remui %bh, %cH : index
      %kvh = arith.divui %h, %cG : index
      %bk0 = arith.muli %b, %cKVH : index
      %bk = arith.addi %bk0, %kvh : index
      %shift16 = arith.constant dense<16> : vector<${E}xi32>
      %neg_inf = arith.constant 0xFF800000 : f32
      %factor = arith.constant ${factor} : f32
      %qv = vector.load %q[%bh, %c0] : memref<${BH}x${E}xf32>, vector<${E}xf32>
      %max = scf.for %j = %c0 to %cS step %c1 iter_args(%m = %neg_inf) -> (f32) {
        %mk = memref.load %mask[%b, %j] : memref<${B}x${S}xf32>
        %open = arith.cmpf une, %mk, %neg_inf : f32
        %s = scf.if %open -> (f32) {
${k_row}
          %prod = arith.mulf %qv, %k_row : vector<${E}xf32>
          %dot = vector.reduction <add>, %prod fastmath<reassoc> : vector<${E}xf32> into f32
          %scaled = arith.mulf %dot, %factor : f32
          %masked = arith.addf %scaled, %mk : f32
          scf.yield %masked : f32
        } else {
          scf.yield %neg_inf : f32
        }
        memref.store %s, %scores[%bh, %j] : memref<${BH}x${S}xf32>
        %next = arith.maximumf %m, %s : f32
        scf.yield %next : f32
      }
      %max_v = vector.broadcast %max : f32 to vector<${lanes}xf32>
      %zero_l = arith.constant dense<0.0> : vector<${lanes}xf32>
      %sums = scf.for %j = %c0 to %cS step %c_lanes iter_args(%acc = %zero_l) -> (vector<${lanes}xf32>) {
        %sv = vector.load %scores[%bh, %j] : memref<${BH}x${S}xf32>, vector<${lanes}xf32>
        %d = arith.subf %sv, %max_v : vector<${lanes}xf32>
        %e = math.exp %d : vector<${lanes}xf32>
        vector.store %e, %scores[%bh, %j] : memref<${BH}x${S}xf32>, vector<${lanes}xf32>
        %grown = arith.addf %acc, %e : vector<${lanes}xf32>
        scf.yield %grown : vector<${lanes}xf32>
      }
      %sum = vector.reduction <add>, %sums fastmath<reassoc> : vector<${lanes}xf32> into f32
      %zero_e = arith.constant dense<0.0> : vector<${E}xf32>
      %weighted = scf.for %j = %c0 to %cS step %c1 iter_args(%acc = %zero_e) -> (vector<${E}xf32>) {
        %mk = memref.load %mask[%b, %j] : memref<${B}x${S}xf32>
        %open = arith.cmpf une, %mk, %neg_inf : f32
        %r = scf.if %open -> (vector<${E}xf32>) {
          %p = memref.load %scores[%bh, %j] : memref<${BH}x${S}xf32>
          %w = arith.divf %p, %sum : f32
          %wv = vector.broadcast %w : f32 to vector<${E}xf32>
${v_row}
          %grown = vector.fma %wv, %v_row, %acc : vector<${E}xf32>
          scf.yield %grown : vector<${E}xf32>
        } else {
          scf.yield %acc : vector<${E}xf32>
        }
        scf.yield %r : vector<${E}xf32>
      }
      %none_open = arith.cmpf oeq, %max, %neg_inf : f32
      %result = arith.select %none_open, %zero_e, %weighted : vector<${E}xf32>
      vector.store %result, %out[%bh, %c0] : memref<${BH}x${E}xf32>, vector<${E}xf32>
      return
    }
  }
}
