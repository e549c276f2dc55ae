    // snippet: reads %${p}code:i8; defines %${p}nib:i32
    %${p}nib8 = arith.extui %${p}code : i8 to i32
    %${p}m15 = arith.constant 15 : i32
    %${p}nib = arith.andi %${p}nib8, %${p}m15 : i32
