tensor.collapse_shape ${src} ${reassociation} : ${from_type} into ${to_type}
