    // snippet: reads %${p}nib:i8; defines %${p}twice:i8
    // the value of the E2M1 code %${p}nib (i8, 0..15) times 2: the integers 0, 1, 2, 3, 4, 6, 8,
    // 12, negated under the sign bit 0x8 (code 8, -0, gives 0)
    %${p}c0 = arith.constant 0 : i8
    %${p}c1 = arith.constant 1 : i8
    %${p}c2 = arith.constant 2 : i8
    %${p}c3 = arith.constant 3 : i8
    %${p}c8 = arith.constant 8 : i8
    %${p}m = arith.andi %${p}nib, %${p}c1 : i8
    %${p}e_sh = arith.shrui %${p}nib, %${p}c1 : i8
    %${p}e = arith.andi %${p}e_sh, %${p}c3 : i8
    %${p}sig = arith.addi %${p}m, %${p}c2 : i8
    %${p}e1 = arith.subi %${p}e, %${p}c1 : i8
    %${p}shift = arith.maxsi %${p}e1, %${p}c0 : i8
    %${p}norm = arith.shli %${p}sig, %${p}shift : i8
    %${p}is_sub = arith.cmpi eq, %${p}e, %${p}c0 : i8
    %${p}mag = arith.select %${p}is_sub, %${p}m, %${p}norm : i8
    %${p}sbit = arith.andi %${p}nib, %${p}c8 : i8
    %${p}neg = arith.cmpi ne, %${p}sbit, %${p}c0 : i8
    %${p}negv = arith.subi %${p}c0, %${p}mag : i8
    %${p}twice = arith.select %${p}neg, %${p}negv, %${p}mag : i8
