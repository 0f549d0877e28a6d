"""Bad kernels whose errors must be of the kind Triton 3.6 raises for them.

Every kernel takes (x_ptr, y_ptr, n, BLOCK) and is compiled as `*fp32,*fp32,i32,16`.
`TRITON` records what Triton 3.6's frontend raised for each (written by
`scripts/error_kinds_vs_triton.py`, which compiles this file with `triton` in place of
`tilecc`): its exception class, the Python exception it wraps (None when it raises its own)
and `GIST`, words tilecc's message must contain to say the same thing.
"""

import tilecc
import tilecc.language as tl


@tilecc.jit
def ellipsis_index(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.store(y_ptr + tl.arange(0, BLOCK), x[..., None])


@tilecc.jit
def integer_index(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.store(y_ptr, x[0])


@tilecc.jit
def slice_with_bounds(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.store(y_ptr + tl.arange(0, BLOCK // 2), x[0:8])


@tilecc.jit
def return_in_for(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    for i in range(n):
        if i > 3:
            return
        tl.store(y_ptr + i, 1.0)


@tilecc.jit
def return_in_while(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    i = 0
    while i < n:
        return
        i += 1


@tilecc.jit
def break_in_loop(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    for i in range(n):
        break


@tilecc.jit
def static_assert_false(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    tl.static_assert(BLOCK == 32, "BLOCK must be 32")


@tilecc.jit
def static_assert_runtime(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    tl.static_assert(n > 0)


@tilecc.jit
def arange_not_power_of_2(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    tl.store(y_ptr + tl.arange(0, 12), 1.0)


@tilecc.jit
def arange_runtime_bound(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    tl.store(y_ptr + tl.arange(0, n), 1.0)


@tilecc.jit
def program_id_axis_3(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    tl.store(y_ptr, tl.program_id(3).to(tl.float32))


@tilecc.jit
def undefined_name(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    tl.store(y_ptr, undefined_thing)  # noqa: F821


@tilecc.jit
def unknown_tl_function(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    tl.store(y_ptr, tl.no_such_function(1.0))


@tilecc.jit
def shape_mismatch(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    a = tl.load(x_ptr + tl.arange(0, BLOCK))
    b = tl.load(x_ptr + tl.arange(0, 2 * BLOCK))
    tl.store(y_ptr + tl.arange(0, BLOCK), a + b)


@tilecc.jit
def load_from_float(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    x = tl.load(x_ptr)
    tl.store(y_ptr, tl.load(x))


@tilecc.jit
def store_to_float(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    x = tl.load(x_ptr)
    tl.store(x, 1.0)


@tilecc.jit
def float_shift(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    x = tl.load(x_ptr)
    tl.store(y_ptr, x << 1)


@tilecc.jit
def float_bitwise_and(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    x = tl.load(x_ptr)
    tl.store(y_ptr, x & x)


@tilecc.jit
def pointer_plus_float(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    tl.store(y_ptr + 1.5, 1.0)


@tilecc.jit
def pointer_times_int(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    tl.store(y_ptr * 2, 1.0)


@tilecc.jit
def if_on_a_block(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    if x > 0:
        tl.store(y_ptr, 1.0)


@tilecc.jit
def reshape_wrong_size(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.store(y_ptr + tl.arange(0, BLOCK), tl.reshape(x, (3, 5)).ravel())


@tilecc.jit
def sum_axis_out_of_range(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.store(y_ptr, tl.sum(x, axis=2))


@tilecc.jit
def unknown_keyword(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK), maks=None)
    tl.store(y_ptr + tl.arange(0, BLOCK), x)


@tilecc.jit
def too_many_arguments(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    tl.store(y_ptr, tl.program_id(0, 1).to(tl.float32))


@tilecc.jit
def power_of_a_block(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.store(y_ptr + tl.arange(0, BLOCK), x ** 2)


@tilecc.jit
def dot_of_1d_blocks(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.store(y_ptr + tl.arange(0, BLOCK), tl.dot(x, x))


@tilecc.jit
def cast_to_a_non_dtype(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    x = tl.load(x_ptr)
    tl.store(y_ptr, x.to(3))


@tilecc.jit
def try_statement(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    try:
        tl.store(y_ptr, 1.0)
    except ValueError:
        pass


@tilecc.jit
def lambda_expression(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    f = lambda v: v  # noqa: E731
    tl.store(y_ptr, f(1.0))


@tilecc.jit
def trans_of_1d(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.store(y_ptr + tl.arange(0, BLOCK), x.T)


@tilecc.jit
def mismatched_if_types(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    if n > 0:
        v = tl.load(x_ptr)
    else:
        v = tl.load(x_ptr).to(tl.float16)
    tl.store(y_ptr, v)


@tilecc.jit
def loop_carried_type_change(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    acc = tl.zeros((BLOCK,), tl.float32)
    for i in range(n):
        acc = acc.to(tl.float16)
    tl.store(y_ptr + tl.arange(0, BLOCK), acc)


@tilecc.jit
def divide_signed_by_unsigned(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    a = n.to(tl.uint32)
    tl.store(y_ptr, (n // a).to(tl.float32))


@tilecc.jit
def device_print_prefix_not_a_string(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    tl.device_print(tl.load(x_ptr))


@tilecc.jit
def static_range_runtime_bound(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    for i in tl.static_range(n):
        tl.store(y_ptr + i, 1.0)


@tilecc.jit
def unknown_method(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.store(y_ptr + tl.arange(0, BLOCK), x.frobnicate())


@tilecc.jit
def mantissa_of_an_integer_type(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    tl.static_assert(tl.int32.fp_mantissa_width == 0)


@tilecc.jit
def item_of_a_block(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.store(y_ptr, x.item())


@tilecc.jit
def continue_in_loop(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    for i in range(n):
        continue


@tilecc.jit
def squeeze_a_block(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.store(y_ptr + tl.arange(0, BLOCK), tl.squeeze(x[None, :], 0))


@tilecc.jit
def unsqueeze_a_block(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.store(y_ptr + tl.arange(0, BLOCK)[None, :], tl.unsqueeze(x, 0))


@tilecc.jit
def topk_ascending(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.store(y_ptr + tl.arange(0, 4), tl.topk(x, 4, descending=False))


@tilecc.jit
def cat_without_reorder(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.store(y_ptr + tl.arange(0, 2 * BLOCK), tl.cat(x, x + 1.0))


CASES = [v for v in list(globals().values()) if isinstance(v, tilecc.JITFunction)]

# name: (Triton's exception class, the Python exception it wraps, tilecc's gist)
TRITON = {
    'ellipsis_index': ('CompilationError', 'ValueError'),  # unsupported tensor index: constexpr[Ellipsis]
    'integer_index': ('CompilationError', 'ValueError'),  # unsupported tensor index: constexpr[0]
    'slice_with_bounds': ('CompilationError', 'ValueError'),  # unsupported tensor index: <triton.language.core.slice object at 0x7f0e069f3150>
    'return_in_for': ('UnsupportedLanguageConstruct', None),  # Cannot have `return` statements inside `while` or `for` statements in triton.
    # Triton's frontend lets this through and fails in MLIR's verifier (RuntimeError:
    # "error encountered during parsing"); tilecc refuses it as Triton's `return_in_for`
    'return_in_while': ('UnsupportedLanguageConstruct', None),
    'break_in_loop': ('UnsupportedLanguageConstruct', None),  # unsupported AST node type: Break
    'static_assert_false': ('CompileTimeAssertionFailure', None),  # BLOCK must be 32
    'static_assert_runtime': ('CompilationError', 'NotImplementedError'),  # NotImplementedError('Assertion condition could not be determined at compile-time. Make sur
    'arange_not_power_of_2': ('CompilationError', 'ValueError'),  # arange's range must be a power of 2
    'arange_runtime_bound': ('CompilationError', 'ValueError'),  # arange's arguments must be of type tl.constexpr
    'program_id_axis_3': ('CompilationError', 'ValueError'),  # program_id axis must be 0, 1, or 2 but got 3
    'undefined_name': ('CompilationError', 'NameError'),  # NameError('undefined_thing is not defined')
    'unknown_tl_function': ('CompilationError', 'AttributeError'),  # AttributeError("module 'triton.language' has no attribute 'no_such_function'")
    'shape_mismatch': ('CompilationError', 'ValueError'),  # ValueError('Cannot make_shape_compatible: incompatible dimensions at index 0: 16 and 32')
    'load_from_float': ('CompilationError', 'ValueError'),  # Unsupported ptr type triton.language.float32 in `tl.load`
    'store_to_float': ('CompilationError', 'ValueError'),  # Unsupported ptr type triton.language.float32 in `tl.store`
    'float_shift': ('CompilationError', 'IncompatibleTypeErrorImpl'),  # IncompatibleTypeErrorImpl('invalid operands of type triton.language.float32 and triton.lan
    'float_bitwise_and': ('CompilationError', 'IncompatibleTypeErrorImpl'),  # IncompatibleTypeErrorImpl('invalid operands of type triton.language.float32 and triton.lan
    'pointer_plus_float': ('CompilationError', 'IncompatibleTypeErrorImpl'),  # IncompatibleTypeErrorImpl('invalid operands of type pointer<fp32> and triton.language.floa
    'pointer_times_int': ('CompilationError', 'IncompatibleTypeErrorImpl'),  # IncompatibleTypeErrorImpl('invalid operands of type pointer<fp32> and triton.language.int3
    'if_on_a_block': ('UnsupportedLanguageConstruct', None),  # Boolean value of Tensor with more than one value is ambiguous
    'reshape_wrong_size': ('CompilationError', 'ValueError'),  # Shape element 0 must be a power of 2
    'sum_axis_out_of_range': ('CompilationError', 'CompilationError'),  #                     ^
    'unknown_keyword': ('CompilationError', 'TypeError'),  # load() got an unexpected keyword argument 'maks'
    'too_many_arguments': ('CompilationError', 'TypeError'),  # program_id() got multiple values for argument '_semantic'
    'power_of_a_block': ('CompilationError', 'AttributeError'),  # AttributeError("'tensor' object has no attribute '__pow__'")
    'dot_of_1d_blocks': ('CompilationError', 'AssertionError'),  # input and other must have equal ranks >= 2
    'cast_to_a_non_dtype': ('CompilationError', 'AttributeError'),  # 'int' object has no attribute 'scalar'
    'try_statement': ('UnsupportedLanguageConstruct', None),  # unsupported AST node type: Try
    'lambda_expression': ('UnsupportedLanguageConstruct', None),  # unsupported AST node type: Lambda
    'trans_of_1d': ('CompilationError', 'ValueError'),  # ValueError('permute dims must have the same length as input shape')
    'mismatched_if_types': ('CompilationError', 'AssertionError'),  # AssertionError('Mismatched type for v between then block (fp32) and else block (fp16)')
    'loop_carried_type_change': ('CompilationError', 'AssertionError'),  # AssertionError("Loop-carried variable acc has initial type <['16'], fp32> but is re-assign
    'divide_signed_by_unsigned': ('CompilationError', 'TypeError'),  # TypeError('Cannot use /, #, or % with triton.language.int32 and triton.language.uint32 bec
    'device_print_prefix_not_a_string': ('CompilationError', 'AssertionError'),  # fp32[] is not string
    'static_range_runtime_bound': ('CompilationError', 'AssertionError'),  # int32[] used as tl.static_range start value is not a constexpr
    'unknown_method': ('CompilationError', 'AttributeError'),  # 'tensor' object has no attribute 'frobnicate'
    'mantissa_of_an_integer_type': ('CompilationError', 'AttributeError'),  # 'dtype' object has no attribute 'fp_mantissa_width'
    'item_of_a_block': ('CompilationError', 'AssertionError'),  # can only unsplat single-element tensors
    'continue_in_loop': ('UnsupportedLanguageConstruct', None),  # unsupported AST node type: Continue
    'squeeze_a_block': ('CompilationError', 'AttributeError'),  # AttributeError("module 'triton.language' has no attribute 'squeeze'")
    'unsqueeze_a_block': ('CompilationError', 'AttributeError'),  # AttributeError("module 'triton.language' has no attribute 'unsqueeze'")
    'topk_ascending': ('CompilationError', 'TypeError'),  # TypeError("topk() got an unexpected keyword argument 'descending'")
    'cat_without_reorder': ('CompilationError', 'AssertionError'),  # current implementation of `cat` always may reorder elements
}
GIST = {
    'ellipsis_index': 'unsupported tensor index',
    'integer_index': 'unsupported tensor index',
    'slice_with_bounds': 'unsupported tensor index',
    'return_in_for': 'Cannot have `return`',
    'return_in_while': 'Cannot have `return`',
    'break_in_loop': '`break` is not supported',
    'static_assert_false': 'BLOCK must be 32',
    'static_assert_runtime': 'compile-time',
    'arange_not_power_of_2': 'power of 2',
    'arange_runtime_bound': 'constexpr',
    'program_id_axis_3': 'program_id axis must be 0, 1, or 2 but got 3',
    'undefined_name': 'not defined',
    'unknown_tl_function': 'tl.no_such_function',
    'shape_mismatch': 'incompatible',
    'load_from_float': 'pointer',
    'store_to_float': 'pointer',
    'float_shift': 'integer',
    'float_bitwise_and': 'integer',
    'pointer_plus_float': 'integer',
    'pointer_times_int': 'pointer',
    'if_on_a_block': 'ambiguous',
    'reshape_wrong_size': 'reshape',
    'sum_axis_out_of_range': 'invalid axis 2',
    'unknown_keyword': "unexpected keyword argument 'maks'",
    'too_many_arguments': 'too many',
    'power_of_a_block': '`**`',
    'dot_of_1d_blocks': '2-D',
    'cast_to_a_non_dtype': 'dtype',
    'try_statement': 'Try statements are not supported',
    'lambda_expression': 'Lambda',
    'trans_of_1d': 'permute dims must have the same length',
    'mismatched_if_types': 'fp16',
    'loop_carried_type_change': 'loop-carried',
    'divide_signed_by_unsigned': 'signedness',
    'device_print_prefix_not_a_string': 'prefix must be a string',
    'static_range_runtime_bound': 'constexpr',
    'unknown_method': '.frobnicate()',
    'mantissa_of_an_integer_type': 'language.int32 has no attribute `fp_mantissa_width`',
    'item_of_a_block': 'one element',
    'continue_in_loop': '`continue` is not supported',
    'squeeze_a_block': 'tl.reshape',
    'unsqueeze_a_block': 'tl.expand_dims',
    'topk_ascending': "unexpected keyword argument 'descending'",
    'cat_without_reorder': 'current implementation of `cat` always may reorder elements',
}
