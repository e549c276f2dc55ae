// snippet: reads %${p}values:vector<64xbf16> ${fa0}:f32 ${fa1}:f32 ${fb0}:f32 ${fb1}:f32; defines %${p}prod:vector<64xf32>
            // each row's two blocks of 16 values times their blocks' scales, in f32 (then rounded
            // to bf16: gemm_panel_round.mlir), as the decomposition's dequantize (exact: an E2M1
            // value times an E4M3 one)
            %${p}wide = arith.extf %${p}values : vector<64xbf16> to vector<64xf32>
            %${p}fa0_v = vector.broadcast ${fa0} : f32 to vector<16xf32>
            %${p}fa1_v = vector.broadcast ${fa1} : f32 to vector<16xf32>
            %${p}fb0_v = vector.broadcast ${fb0} : f32 to vector<16xf32>
            %${p}fb1_v = vector.broadcast ${fb1} : f32 to vector<16xf32>
            %${p}fa = vector.shuffle %${p}fa0_v, %${p}fa1_v ${concat16} : vector<16xf32>, vector<16xf32>
            %${p}fb = vector.shuffle %${p}fb0_v, %${p}fb1_v ${concat16} : vector<16xf32>, vector<16xf32>
            %${p}f = vector.shuffle %${p}fa, %${p}fb ${concat32} : vector<32xf32>, vector<32xf32>
            %${p}prod = arith.mulf %${p}wide, %${p}f : vector<64xf32>
