          // snippet: reads ${codes}:vector<32xi8> %f16_shift7:vector<32xi16> %f16_shift8:vector<32xi16> %f16_sign:vector<32xi16> %f16_magnitude:vector<32xi16> %f16_nan:vector<32xi16>; defines %${out}:vector<32xf32>
          // 32 E4M3 codes as f32 through f16 (vcvtph2ps): an f16 with E4M3's magnitude bits at
          // its exponent and mantissa's top (code << 7) is the code's value times 2^-8, f16
          // subnormals included (both biases differ by 8), the sign bit moved to bit 15;
          // magnitude 0x7F (NaN) an f16 NaN. Exact for every code; x carries the 2^8.
          %${p}wide = arith.extui ${codes} : vector<32xi8> to vector<32xi16>
          %${p}s7 = arith.shli %${p}wide, %f16_shift7 : vector<32xi16>
          %${p}s8 = arith.shli %${p}wide, %f16_shift8 : vector<32xi16>
          %${p}mag = arith.andi %${p}s7, %f16_magnitude : vector<32xi16>
          %${p}sign = arith.andi %${p}s8, %f16_sign : vector<32xi16>
          %${p}bits = arith.ori %${p}mag, %${p}sign : vector<32xi16>
          %${p}is_nan = arith.cmpi eq, %${p}mag, %f16_magnitude : vector<32xi16>
          %${p}f16_bits = arith.select %${p}is_nan, %f16_nan, %${p}bits : vector<32xi1>, vector<32xi16>
          %${p}half = arith.bitcast %${p}f16_bits : vector<32xi16> to vector<32xf16>
          %${out} = arith.extf %${p}half : vector<32xf16> to vector<32xf32>
