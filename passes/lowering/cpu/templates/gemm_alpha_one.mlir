// snippet: reads; defines %alpha:f32
      // block scales only: the sums are not scaled after
      %alpha = arith.constant 1.0 : f32
