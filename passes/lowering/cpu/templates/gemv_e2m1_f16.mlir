          // snippet: reads ${wide}:vector<32xi16> ${mag_shift}:vector<32xi16> ${sign_shift}:vector<32xi16> %fp4_magnitude:vector<32xi16> %f16_sign:vector<32xi16>; defines %${out}:vector<32xf32>
          // 32 E2M1 codes (one nibble of 32 bytes, zero-extended to 16 bits) as f32 through f16
          // (vcvtph2ps): an f16 with the code's magnitude bits at bits 9..11 (the exponent's low
          // two and the mantissa's top) is its value times 2^-14, f16 subnormals included (code
          // 1, 0.5, is one); its sign at bit 15. Exact for every code; x carries the 2^14.
          %${p}m = arith.shli ${wide}, ${mag_shift} : vector<32xi16>
          %${p}mag = arith.andi %${p}m, %fp4_magnitude : vector<32xi16>
          %${p}sg = arith.shli ${wide}, ${sign_shift} : vector<32xi16>
          %${p}sign = arith.andi %${p}sg, %f16_sign : vector<32xi16>
          %${p}bits = arith.ori %${p}mag, %${p}sign : vector<32xi16>
          %${p}half = arith.bitcast %${p}bits : vector<32xi16> to vector<32xf16>
          %${out} = arith.extf %${p}half : vector<32xf16> to vector<32xf32>
