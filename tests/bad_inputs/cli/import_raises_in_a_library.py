# args: emit {file}:scale -s '*fp32,*fp32,i32,1024'
# error: tilecc: error: {file}:9: loading it raised JSONDecodeError: Expecting value: line 1 column 1 (char 0) (raised at
# error: json/decoder.py:

import json

import tilecc
import tilecc.language as tl
CONFIG = json.loads("not json")


@tilecc.jit
def scale(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)
