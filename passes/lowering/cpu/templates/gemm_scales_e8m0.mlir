// snippet: reads %${p}codes:vector<64xi8>; defines %${p}wide:vector<64xf32>
            // 64 E8M0 scale codes' values: 2^(e - 127) as the f32 of e << 23 (0, 2^-127, gives 0:
            // no f32 normal, as in the decode step's loop), 255 NaN
            %${p}e = arith.extui %${p}codes : vector<64xi8> to vector<64xi32>
            %${p}c23 = arith.constant dense<23> : vector<64xi32>
            %${p}c255 = arith.constant dense<255> : vector<64xi32>
            %${p}nan = arith.constant dense<0x7FC00000> : vector<64xf32>
            %${p}bits = arith.shli %${p}e, %${p}c23 : vector<64xi32>
            %${p}pow2 = arith.bitcast %${p}bits : vector<64xi32> to vector<64xf32>
            %${p}is_nan = arith.cmpi eq, %${p}e, %${p}c255 : vector<64xi32>
            %${p}wide = arith.select %${p}is_nan, %${p}nan, %${p}pow2 : vector<64xi1>, vector<64xf32>
