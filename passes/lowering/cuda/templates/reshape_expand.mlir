tensor.expand_shape ${src} ${reassociation} output_shape [${shape}] : ${from_type} into ${to_type}
