"""``benchmarks/profile_decode.py`` names a sample's dispatch from the library's symbol table and
groups dispatches into families by IREE's naming: what its per-family table rests on."""

from __future__ import annotations

from collections import Counter

from benchmarks.profile_decode import HOST, attribute, family


def test_dispatch_families_follow_iree_names() -> None:
    assert family("main$async_dispatch_67_mmt4d_43xDx128x16x16x2_bf16xbf16xf32") == "mmt4d"
    assert family("main$async_dispatch_44_batch_mmt4d_4x4xDx64x16x16x1_f32") == "batch_mmt4d"
    assert family("main$async_dispatch_66_elementwise_2883584_i8xbf16") == "elementwise"
    assert family("main$async_dispatch_40_elementwise_broadcast_2x2x4096_f32") == (
        "elementwise_broadcast"
    )
    assert family("main$async_dispatch_68_pack_bf16") == "pack"
    assert family("_initializer_0_dispatch_1_pack_bf16") == "pack"
    assert family("main$async_dispatch_8_reduction_Dx256_f32xi32") == "reduction"
    assert family("main$async_dispatch_3_slow_memcpy") == "slow_memcpy"
    assert family("not_a_dispatch") == "not_a_dispatch"


def test_samples_go_to_the_function_whose_range_holds_them() -> None:
    starts, names = [0x3000, 0x3150, 0x4000], ["decode", "pack", "mmt4d"]
    counts = Counter(
        {
            ("iree_dylib_ab_mem_.so", "0x0000000000003000"): 2,  # a function's first byte
            ("iree_dylib_ab_mem_.so", "0x000000000000314f"): 3,  # its last
            ("iree_dylib_ab_mem_.so", "0x0000000000003150"): 5,
            ("iree_dylib_ab_mem_.so", "0x0000000000004a00"): 7,
            ("iree_dylib_ab_mem_.so", "0x0000000000000010"): 1,  # before any function
            ("[kernel.kallsyms]", "clear_page_erms"): 11,
            ("libpython3.11.so.1.0", "_PyEval_EvalFrameDefault"): 13,
        }
    )
    assert attribute(counts, starts, names) == Counter(
        {"decode": 5, "pack": 5, "mmt4d": 7, HOST: 25}
    )
