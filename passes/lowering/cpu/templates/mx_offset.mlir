    // snippet: reads ${row}:index ${col}:index; defines %${out}:index
    // %${out} = flat offset of S[${row}, ${col}] in the mx layout: 128x4 tiles stored
    // contiguously, tiles row-major (${col_tiles} per tile row), inside a tile the 128 four-byte
    // rows interleaved 0, 32, 64, 96, 1, 33, ... (spec/mxfp8.rst).
    %${out}_c4 = arith.constant 4 : index
    %${out}_c32 = arith.constant 32 : index
    %${out}_c128 = arith.constant 128 : index
    %${out}_c512 = arith.constant 512 : index
    %${out}_ntc = arith.constant ${col_tiles} : index
    %${out}_tr = arith.divui ${row}, %${out}_c128 : index
    %${out}_tc = arith.divui ${col}, %${out}_c4 : index
    %${out}_t0 = arith.muli %${out}_tr, %${out}_ntc : index
    %${out}_tile = arith.addi %${out}_t0, %${out}_tc : index
    %${out}_r128 = arith.remui ${row}, %${out}_c128 : index
    %${out}_r32 = arith.remui %${out}_r128, %${out}_c32 : index
    %${out}_rq = arith.divui %${out}_r128, %${out}_c32 : index
    %${out}_p0 = arith.muli %${out}_r32, %${out}_c4 : index
    %${out}_pos = arith.addi %${out}_p0, %${out}_rq : index
    %${out}_cc = arith.remui ${col}, %${out}_c4 : index
    %${out}_o0 = arith.muli %${out}_tile, %${out}_c512 : index
    %${out}_o1 = arith.muli %${out}_pos, %${out}_c4 : index
    %${out}_o2 = arith.addi %${out}_o0, %${out}_o1 : index
    %${out} = arith.addi %${out}_o2, %${out}_cc : index
