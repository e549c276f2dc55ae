    // snippet: reads %sc_code:i8; defines %scale64:f64; holes decode
    // %scale64 = the block scale code %sc_code (i8, ${scale_format}) decoded exactly in f64
${decode}
