  // snippet: reads %kc:index %c0:index %c2:index %c32:index %cKC:index; defines; locals %kq %k %kh %line0; holes panel_scales panel
${panel_scales}
          scf.for %kq = %c0 to %cKC step %c32 {
            %k = arith.addi %kc, %kq : index
            %kh = arith.divui %k, %c2 : index
            %line0 = arith.divui %kq, %c2 : index
${panel}
          }
