// snippet: reads %${p}values:vector<64xbf16> ${fa}:f32 ${fb}:f32; defines %${p}prod:vector<64xf32>
            // each row's 32 values times its block's scale, in f32 (then rounded to bf16:
            // gemm_panel_round.mlir), as the decomposition's dequantize (exact: the scales are
            // powers of two, gemm-operands' proof)
            %${p}wide = arith.extf %${p}values : vector<64xbf16> to vector<64xf32>
            %${p}fa_v = vector.broadcast ${fa} : f32 to vector<32xf32>
            %${p}fb_v = vector.broadcast ${fb} : f32 to vector<32xf32>
            %${p}f = vector.shuffle %${p}fa_v, %${p}fb_v ${concat} : vector<32xf32>, vector<32xf32>
            %${p}prod = arith.mulf %${p}wide, %${p}f : vector<64xf32>
