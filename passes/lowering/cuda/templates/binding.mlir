#hal.pipeline.binding<storage_buffer${access}>
