"""Python kernel → tile IR → CUDA / HIP source.

Stages, each with one entry point:
  frontend.parse(fn, specs, target=) -> ir.Kernel   (libcst; names, constexprs, inlining)
  passes.run_passes(kernel, target)  -> layouts     (axis info, layouts, memory plans)
  render.render(kernel, target, ...) -> Rendered      (Jinja templates + device header)
"""
