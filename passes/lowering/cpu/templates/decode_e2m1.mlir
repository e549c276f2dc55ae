    // snippet: reads %${p}nib:i32; defines ${out}:f32
    // ${out} = the value of the E2M1 code %${p}nib (i32, 0..15): 0, .5, 1, 1.5, 2, 3, 4, 6,
    // sign bit 0x8 (code 8 is -0.0)
    %${p}n1 = arith.constant 1 : i32
    %${p}n3 = arith.constant 3 : i32
    %${p}n8 = arith.constant 8 : i32
    %${p}n0 = arith.constant 0 : i32
    %${p}n23 = arith.constant 23 : i32
    %${p}n125 = arith.constant 125 : i32
    %${p}m = arith.andi %${p}nib, %${p}n1 : i32
    %${p}e_sh = arith.shrui %${p}nib, %${p}n1 : i32
    %${p}e = arith.andi %${p}e_sh, %${p}n3 : i32
    %${p}half = arith.constant 0.5 : f32
    %${p}m_f = arith.uitofp %${p}m : i32 to f32
    %${p}sub = arith.mulf %${p}m_f, %${p}half : f32
    %${p}one_m = arith.addi %${p}m, %${p}n1 : i32
    %${p}two_m = arith.addi %${p}one_m, %${p}n1 : i32
    %${p}sig = arith.uitofp %${p}two_m : i32 to f32
    %${p}pexp = arith.addi %${p}e, %${p}n125 : i32
    %${p}pbits = arith.shli %${p}pexp, %${p}n23 : i32
    %${p}pow = arith.bitcast %${p}pbits : i32 to f32
    %${p}norm = arith.mulf %${p}sig, %${p}pow : f32
    %${p}is_sub = arith.cmpi eq, %${p}e, %${p}n0 : i32
    %${p}mag = arith.select %${p}is_sub, %${p}sub, %${p}norm : f32
    %${p}sbit = arith.andi %${p}nib, %${p}n8 : i32
    %${p}neg = arith.cmpi ne, %${p}sbit, %${p}n0 : i32
    %${p}negv = arith.negf %${p}mag : f32
    ${out} = arith.select %${p}neg, %${p}negv, %${p}mag : f32
