"""Writes specs that are well-formed but extreme (issue 9's catalogue):
200 arguments, 5000 ops in one region, regions nested 2000 deep."""
import os
import sys

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
args = ", ".join(f"%a{i}: !v" for i in range(200))
with open(os.path.join(out, "many-args.mlir"), "w") as f:
    f.write(f"""!v = !tdim.tensor<[n: ?], f32>
tdim.kernel @k({args}) -> (%y: !v) {{
  tdim.map ins(%a0, %a199 : !v, !v) outs(%y : !v) {{
  ^bb0(%p: f32, %q: f32):
    %r = arith.addf %p, %q : f32
    tdim.yield %r : f32
  }}
  tdim.return
}}
""")
ops = "\n".join(f"    %t{i + 1} = arith.addf %t{i}, %t{i} : f32" for i in range(5000))
with open(os.path.join(out, "many-ops.mlir"), "w") as f:
    f.write(f"""!v = !tdim.tensor<[n: ?], f32>
tdim.kernel @k(%x: !v) -> (%y: !v) {{
  tdim.map ins(%x : !v) outs(%y : !v) {{
  ^bb0(%t0: f32):
{ops}
    tdim.yield %t5000 : f32
  }}
  tdim.return
}}
""")
depth = 2000
with open(os.path.join(out, "deep.mlir"), "w") as f:
    f.write("func.func @f() {\n" + "scf.execute_region {\n" * depth +
            "scf.yield\n}\n" * depth + "return\n}\n")
