// snippet: reads %n:index; defines %${p}ra:index %${p}rb:index
            // rows ${ra} and ${rb} of the panel's 16 rows of w
            %${p}oa = arith.constant ${ra} : index
            %${p}ob = arith.constant ${rb} : index
            %${p}ra = arith.addi %n, %${p}oa : index
            %${p}rb = arith.addi %n, %${p}ob : index
