tensor.cast ${src} : ${from_type} to ${to_type}
