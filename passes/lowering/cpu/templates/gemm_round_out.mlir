// snippet: reads %out16_binding:!stream.binding %c0:index %m:index; defines %out16:memref<?x${N}xbf16>
      // the outputs, rounded to bf16 at the last block of K (out: the f32 sums before it)
      %out16 = stream.binding.subspan %out16_binding[%c0] : !stream.binding -> memref<?x${N}xbf16>{%m}
