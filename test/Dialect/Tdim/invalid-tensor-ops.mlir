// Whole-tensor ops: map, reduce, broadcast, relayout, concat, contract,
// softmax, log_softmax, layer_norm.
// RUN: nerve-opt %s -split-input-file -verify-diagnostics

!m = !tdim.tensor<[r: ?, c: ?], f32>

tdim.kernel @k(%x: !m) -> (%y: !m, %z: !tdim.tensor<[r: ?], f32>) {
  // expected-error @+1 {{outputs have different dimensions: output #0 has `r`, `c`, output #1 has `r`}}
  tdim.map ins(%x : !m) outs(%y, %z : !m, !tdim.tensor<[r: ?], f32>) {
  ^bb0(%v: f32):
    tdim.yield %v, %v : f32, f32
  }
  tdim.return
}

// -----

!m = !tdim.tensor<[r: ?, c: ?], f32>

tdim.kernel @k(%x: !tdim.tensor<[r: ?, c: ?, k: ?], f32>) -> (%y: !m) {
  // expected-error @+1 {{operand #0 has dimension `k`, which the outputs lack (they have `r`, `c`); a map cannot reduce, use tdim.reduce}}
  tdim.map ins(%x : !tdim.tensor<[r: ?, c: ?, k: ?], f32>) outs(%y : !m) {
  ^bb0(%v: f32):
    tdim.yield %v : f32
  }
  tdim.return
}

// -----

tdim.kernel @k() {
  %x = tdim.alloc() : !tdim.tensor<[r: 4, c: 5], f32>
  %y = tdim.alloc() : !tdim.tensor<[r: 4, c: 6], f32>
  // expected-error @+1 {{operand #1 has dimension `c` of size 6 but operand #0 has it with size 5}}
  tdim.map ins(%x : !tdim.tensor<[r: 4, c: 5], f32>) outs(%y : !tdim.tensor<[r: 4, c: 6], f32>) {
  ^bb0(%v: f32):
    tdim.yield %v : f32
  }
  tdim.return
}

// -----

!m = !tdim.tensor<[r: ?, c: ?], f32>

tdim.kernel @k(%x: !m) -> (%y: !m) {
  %w = arith.constant dense<1.0> : vector<4xf32>
  // expected-error @+1 {{operand #1 has type 'vector<4xf32>'; inputs are tdim tensors or scalars}}
  tdim.map ins(%x, %w : !m, vector<4xf32>) outs(%y : !m) {
  ^bb0(%v: f32, %u: vector<4xf32>):
    tdim.yield %v : f32
  }
  tdim.return
}

// -----

!m = !tdim.tensor<[r: ?, c: ?], f32>

tdim.kernel @k(%x: !m) -> (%y: !m) {
  // expected-error @+1 {{region takes 2 arguments but the map has 1 inputs}}
  tdim.map ins(%x : !m) outs(%y : !m) {
  ^bb0(%v: f32, %u: f32):
    tdim.yield %v : f32
  }
  tdim.return
}

// -----

!m = !tdim.tensor<[r: ?, c: ?], f32>

tdim.kernel @k(%x: !m) -> (%y: !m) {
  // expected-error @+1 {{region argument #0 has type 'f16' but input #0 holds 'f32'}}
  tdim.map ins(%x : !m) outs(%y : !m) {
  ^bb0(%v: f16):
    tdim.yield %v : f16
  }
  tdim.return
}

// -----

!m = !tdim.tensor<[r: ?, c: ?], f32>

tdim.kernel @k(%x: !m) -> (%y: !m) {
  tdim.map ins(%x : !m) outs(%y : !m) {
  ^bb0(%v: f32):
    // expected-error @+1 {{yields 2 values but the map has 1 outputs}}
    tdim.yield %v, %v : f32, f32
  }
  tdim.return
}

// -----

!m = !tdim.tensor<[r: ?, c: ?], f32>

tdim.kernel @k(%x: !m) -> (%y: !m) {
  tdim.map ins(%x : !m) outs(%y : !m) {
  ^bb0(%v: f32):
    %i = arith.fptosi %v : f32 to i32
    // expected-error @+1 {{yields 'i32' for output #0, which holds 'f32'}}
    tdim.yield %i : i32
  }
  tdim.return
}

// -----

!m = !tdim.tensor<[r: ?, c: ?], f32>
!rows = !tdim.tensor<[r: ?], f32>

tdim.kernel @k(%x: !m) -> (%s: !rows) {
  // expected-error @+1 {{reduces over `c`, which the outputs keep (they have `r`, `c`)}}
  tdim.reduce ins(%x : !m) outs(%x : !m) over [c] init [0.0 : f32]
    combine {
    ^bb0(%a: f32, %b: f32):
      %t = arith.addf %a, %b : f32
      tdim.yield %t : f32
    }
  tdim.return
}

// -----

!m = !tdim.tensor<[r: ?, c: ?], f32>
!rows = !tdim.tensor<[r: ?], f32>

tdim.kernel @k(%x: !m) -> (%s: !rows) {
  // expected-error @+1 {{max_sum_exp needs two f32 accumulators (the maximum and the sum)}}
  tdim.reduce ins(%x : !m) outs(%s : !rows) over [c] init [0.0 : f32] max_sum_exp
    combine {
    ^bb0(%a: f32, %b: f32):
      %t = arith.addf %a, %b : f32
      tdim.yield %t : f32
    }
  tdim.return
}

// -----

!m = !tdim.tensor<[r: ?, c: ?], f32>
!rows = !tdim.tensor<[r: ?], f32>

tdim.kernel @k(%x: !m) -> (%s: !rows) {
  // expected-error @+1 {{reduces over `k`, which no input has (operand #0 has `r`, `c`)}}
  tdim.reduce ins(%x : !m) outs(%s : !rows) over [k] init [0.0 : f32]
    combine {
    ^bb0(%a: f32, %b: f32):
      %t = arith.addf %a, %b : f32
      tdim.yield %t : f32
    }
  tdim.return
}

// -----

!rows = !tdim.tensor<[r: ?], f32>

tdim.kernel @k(%x: !tdim.tensor<[r: ?, c: ?, k: ?], f32>) -> (%s: !rows) {
  // expected-error @+1 {{operand #0 has dimension `c`, which is neither kept by the outputs (`r`) nor listed in `over`}}
  tdim.reduce ins(%x : !tdim.tensor<[r: ?, c: ?, k: ?], f32>) outs(%s : !rows) over [k] init [0.0 : f32]
    combine {
    ^bb0(%a: f32, %b: f32):
      %t = arith.addf %a, %b : f32
      tdim.yield %t : f32
    }
  tdim.return
}

// -----

!m = !tdim.tensor<[r: ?, c: ?], f32>
!rows = !tdim.tensor<[r: ?], f32>

tdim.kernel @k(%x: !m) -> (%s: !rows) {
  // expected-error @+1 {{reduces over `c` twice}}
  tdim.reduce ins(%x : !m) outs(%s : !rows) over [c, c] init [0.0 : f32]
    combine {
    ^bb0(%a: f32, %b: f32):
      %t = arith.addf %a, %b : f32
      tdim.yield %t : f32
    }
  tdim.return
}

// -----

!m = !tdim.tensor<[r: ?, c: ?], f32>
!rows = !tdim.tensor<[r: ?], f32>

tdim.kernel @k(%x: !m) -> (%s: !rows) {
  // expected-error @+1 {{identity #0 has no type; write e.g. `0.0 : f32`}}
  tdim.reduce ins(%x : !m) outs(%s : !rows) over [c] init [unit]
    combine {
    ^bb0(%a: f32, %b: f32):
      %t = arith.addf %a, %b : f32
      tdim.yield %t : f32
    }
  tdim.return
}

// -----

!m = !tdim.tensor<[r: ?, c: ?], f32>
!rows = !tdim.tensor<[r: ?], f32>

tdim.kernel @k(%x: !m) -> (%s: !rows) {
  // expected-error @+1 {{`combine` takes 1 arguments; expected 2 (two of each accumulator)}}
  tdim.reduce ins(%x : !m) outs(%s : !rows) over [c] init [0.0 : f32]
    combine {
    ^bb0(%a: f32):
      tdim.yield %a : f32
    }
  tdim.return
}

// -----

!m = !tdim.tensor<[r: ?, c: ?], f32>
!rows = !tdim.tensor<[r: ?], f32>

tdim.kernel @k(%x: !m) -> (%s: !rows) {
  // expected-error @+1 {{accumulator #0 has type 'i32' but input #0 holds 'f32'; add a `map` region to convert}}
  tdim.reduce ins(%x : !m) outs(%s : !rows) over [c] init [0 : i32]
    combine {
    ^bb0(%a: i32, %b: i32):
      %t = arith.addi %a, %b : i32
      tdim.yield %t : i32
    }
  tdim.return
}

// -----

!m = !tdim.tensor<[r: ?, c: ?], f32>
!rows = !tdim.tensor<[r: ?], f32>

tdim.kernel @k(%x: !m) -> (%s: !rows) {
  // expected-error @+1 {{`map` takes 3 arguments; expected 1 (one per input), optionally followed by 1 `index` positions}}
  tdim.reduce ins(%x : !m) outs(%s : !rows) over [c] init [0.0 : f32]
    map {
    ^bb0(%v: f32, %p: index, %q: index):
      tdim.yield %v : f32
    }
    combine {
    ^bb0(%a: f32, %b: f32):
      %t = arith.addf %a, %b : f32
      tdim.yield %t : f32
    }
  tdim.return
}

// -----

!m = !tdim.tensor<[r: ?, c: ?], f32>
!rows = !tdim.tensor<[r: ?], f32>

tdim.kernel @k(%x: !m) -> (%s: !rows) {
  // expected-error @+1 {{`map` argument #1 is a position along a reduced dimension and must be `index`}}
  tdim.reduce ins(%x : !m) outs(%s : !rows) over [c] init [0.0 : f32]
    map {
    ^bb0(%v: f32, %p: i32):
      tdim.yield %v : f32
    }
    combine {
    ^bb0(%a: f32, %b: f32):
      %t = arith.addf %a, %b : f32
      tdim.yield %t : f32
    }
  tdim.return
}

// -----

!m = !tdim.tensor<[r: ?, c: ?], f32>
!rows = !tdim.tensor<[r: ?], f32>

tdim.kernel @k(%x: !m) -> (%s: !rows) {
  // expected-error @+1 {{`post` takes 1 arguments; expected the 1 accumulators and the `index` count}}
  tdim.reduce ins(%x : !m) outs(%s : !rows) over [c] init [0.0 : f32]
    combine {
    ^bb0(%a: f32, %b: f32):
      %t = arith.addf %a, %b : f32
      tdim.yield %t : f32
    }
    post {
    ^bb0(%a: f32):
      tdim.yield %a : f32
    }
  tdim.return
}

// -----

!m = !tdim.tensor<[r: ?, c: ?], f32>
!rows = !tdim.tensor<[r: ?], f32>

tdim.kernel @k(%x: !m) -> (%s: !rows, %t: !rows) {
  // expected-error @+1 {{has 1 accumulators and 2 outputs; without a `post` region they must match}}
  tdim.reduce ins(%x : !m) outs(%s, %t : !rows, !rows) over [c] init [0.0 : f32]
    combine {
    ^bb0(%a: f32, %b: f32):
      %u = arith.addf %a, %b : f32
      tdim.yield %u : f32
    }
  tdim.return
}

// -----

!m = !tdim.tensor<[r: ?, c: ?], f32>

tdim.kernel @k(%b: !tdim.tensor<[k: ?], f32>) -> (%y: !m) {
  // expected-error @+1 {{input has dimension `k`, which the output lacks (it has `r`, `c`)}}
  tdim.broadcast ins(%b : !tdim.tensor<[k: ?], f32>) outs(%y : !m)
  tdim.return
}

// -----

!m = !tdim.tensor<[r: ?, c: ?], f32>

tdim.kernel @k(%b: !tdim.tensor<[c: ?], f16>) -> (%y: !m) {
  // expected-error @+1 {{copies 'f16' into a tensor of 'f32'; convert with tdim.map}}
  tdim.broadcast ins(%b : !tdim.tensor<[c: ?], f16>) outs(%y : !m)
  tdim.return
}

// -----

!m = !tdim.tensor<[r: ?, c: ?], f32>

tdim.kernel @k(%x: !m) -> (%y: !tdim.tensor<[r: ?], f32>) {
  // expected-error @+1 {{input has `r`, `c` but output has `r`; a relayout keeps the dimensions}}
  tdim.relayout ins(%x : !m) outs(%y : !tdim.tensor<[r: ?], f32>)
  tdim.return
}

// -----

tdim.kernel @k(%a: !tdim.tensor<[r: 2, c: 3], f32>, %b: !tdim.tensor<[r: 2, c: 4], f32>)
    -> (%y: !tdim.tensor<[r: 2, c: 8], f32>) {
  // expected-error @+1 {{inputs add up to 7 along `c` but the output has 8}}
  tdim.concat ins(%a, %b : !tdim.tensor<[r: 2, c: 3], f32>, !tdim.tensor<[r: 2, c: 4], f32>)
      outs(%y : !tdim.tensor<[r: 2, c: 8], f32>) along c
  tdim.return
}

// -----

tdim.kernel @k(%a: !tdim.tensor<[r: 2, c: 3], f32>) -> (%y: !tdim.tensor<[r: 2, c: 7], f32>) {
  %b = tdim.alloc() : !tdim.tensor<[r: 3, c: 4], f32>
  // expected-error @+1 {{operand #1 has dimension `r` of size 3 but operand #0 has it with size 2}}
  tdim.concat ins(%a, %b : !tdim.tensor<[r: 2, c: 3], f32>, !tdim.tensor<[r: 3, c: 4], f32>)
      outs(%y : !tdim.tensor<[r: 2, c: 7], f32>) along c
  tdim.return
}

// -----

tdim.kernel @k(%a: !tdim.tensor<[r: 2, c: 3], f32>) -> (%y: !tdim.tensor<[r: 2, c: 3], f32>) {
  // expected-error @+1 {{output has no dimension `k` (it has `r`, `c`)}}
  tdim.concat ins(%a : !tdim.tensor<[r: 2, c: 3], f32>) outs(%y : !tdim.tensor<[r: 2, c: 3], f32>) along k
  tdim.return
}

// -----

tdim.kernel @k(%a: !tdim.tensor<[i: ?, k: ?], f32>, %b: !tdim.tensor<[k: ?, j: ?], f32>)
    -> (%c: !tdim.tensor<[i: ?, n: ?], f32>) {
  // expected-error @+1 {{output dimension `n` is in neither operand (they have `i`, `k` and `k`, `j`)}}
  tdim.contract ins(%a, %b : !tdim.tensor<[i: ?, k: ?], f32>, !tdim.tensor<[k: ?, j: ?], f32>)
      outs(%c : !tdim.tensor<[i: ?, n: ?], f32>)
  tdim.return
}

// -----

tdim.kernel @k(%a: !tdim.tensor<[i: ?, k: ?], f32>, %b: !tdim.tensor<[m: ?, j: ?], f32>)
    -> (%c: !tdim.tensor<[i: ?, j: ?], f32>) {
  // expected-error @+1 {{contracted dimension `k` of operand #0 must appear in both operands (the other has `m`, `j`)}}
  tdim.contract ins(%a, %b : !tdim.tensor<[i: ?, k: ?], f32>, !tdim.tensor<[m: ?, j: ?], f32>)
      outs(%c : !tdim.tensor<[i: ?, j: ?], f32>)
  tdim.return
}

// -----

tdim.kernel @k(%a: !tdim.tensor<[i: ?, k: ?], f16>, %b: !tdim.tensor<[k: ?, j: ?], f32>)
    -> (%c: !tdim.tensor<[i: ?, j: ?], f32>) {
  // expected-error @+1 {{operands and output must hold one float type; they hold 'f16', 'f32' and 'f32'}}
  tdim.contract ins(%a, %b : !tdim.tensor<[i: ?, k: ?], f16>, !tdim.tensor<[k: ?, j: ?], f32>)
      outs(%c : !tdim.tensor<[i: ?, j: ?], f32>)
  tdim.return
}

// -----

// A contraction's epilogue: `with` inputs over the output's dimensions,
// one region argument for the sum and one per input, one value yielded.
!a = !tdim.tensor<[i: ?, k: ?], f16>
!b = !tdim.tensor<[j: ?, k: ?], f16>
!c = !tdim.tensor<[i: ?, j: ?], f16>
tdim.kernel @k(%a: !a, %b: !b, %v: !tdim.tensor<[k: ?], f16>) -> (%c: !c) {
  // expected-error @+1 {{`with` input #0 has dimension `k`, which the output lacks (it has `i`, `j`)}}
  tdim.contract ins(%a, %b : !a, !b) with(%v : !tdim.tensor<[k: ?], f16>) outs(%c : !c) epilogue {
  ^bb0(%s: f32, %x: f32):
    tdim.yield %s : f32
  }
  tdim.return
}

// -----

!a = !tdim.tensor<[i: ?, k: ?], f16>
!b = !tdim.tensor<[j: ?, k: ?], f16>
!c = !tdim.tensor<[i: ?, j: ?], f16>
tdim.kernel @k(%a: !a, %b: !b, %v: !tdim.tensor<[j: ?], f16>) -> (%c: !c) {
  // expected-error @+1 {{has `with` inputs but no epilogue to use them}}
  tdim.contract ins(%a, %b : !a, !b) with(%v : !tdim.tensor<[j: ?], f16>) outs(%c : !c)
  tdim.return
}

// -----

!a = !tdim.tensor<[i: ?, k: ?], f16>
!b = !tdim.tensor<[j: ?, k: ?], f16>
!c = !tdim.tensor<[i: ?, j: ?], f16>
tdim.kernel @k(%a: !a, %b: !b, %v: !tdim.tensor<[j: ?], f16>) -> (%c: !c) {
  // expected-error @+1 {{epilogue takes 1 arguments but needs 2 (the sum, then one per `with` input)}}
  tdim.contract ins(%a, %b : !a, !b) with(%v : !tdim.tensor<[j: ?], f16>) outs(%c : !c) epilogue {
  ^bb0(%s: f32):
    tdim.yield %s : f32
  }
  tdim.return
}

// -----

!a = !tdim.tensor<[i: ?, k: ?], f16>
!b = !tdim.tensor<[j: ?, k: ?], f16>
!c = !tdim.tensor<[i: ?, j: ?], f16>
tdim.kernel @k(%a: !a, %b: !b) -> (%c: !c) {
  // expected-error @+1 {{epilogue argument #0 (the sum) has type 'f16' but the sum is 'f32'}}
  tdim.contract ins(%a, %b : !a, !b) outs(%c : !c) epilogue {
  ^bb0(%s: f16):
    tdim.yield %s : f16
  }
  tdim.return
}

// -----

!a = !tdim.tensor<[i: ?, k: ?], f16>
!b = !tdim.tensor<[j: ?, k: ?], f16>
!c = !tdim.tensor<[i: ?, j: ?], f16>
tdim.kernel @k(%a: !a, %b: !b, %v: !tdim.tensor<[j: ?], f32>) -> (%c: !c) {
  // expected-error @+1 {{epilogue argument #1 has type 'f16' but `with` input #0 holds 'f32'}}
  tdim.contract ins(%a, %b : !a, !b) with(%v : !tdim.tensor<[j: ?], f32>) outs(%c : !c) epilogue {
  ^bb0(%s: f32, %x: f16):
    tdim.yield %s : f32
  }
  tdim.return
}

// -----

!a = !tdim.tensor<[i: ?, k: ?], f16>
!b = !tdim.tensor<[j: ?, k: ?], f16>
!c = !tdim.tensor<[i: ?, j: ?], f16>
tdim.kernel @k(%a: !a, %b: !b) -> (%c: !c) {
  tdim.contract ins(%a, %b : !a, !b) outs(%c : !c) epilogue {
  ^bb0(%s: f32):
    // expected-error @+1 {{yields 2 values but needs 1 (the output's)}}
    tdim.yield %s, %s : f32, f32
  }
  tdim.return
}

// -----

!a = !tdim.tensor<[i: ?, k: ?], f16>
!b = !tdim.tensor<[j: ?, k: ?], f16>
!c = !tdim.tensor<[i: ?, j: ?], f16>
tdim.kernel @k(%a: !a, %b: !b) -> (%c: !c) {
  tdim.contract ins(%a, %b : !a, !b) outs(%c : !c) epilogue {
  ^bb0(%s: f32):
    %i = arith.fptosi %s : f32 to i32
    // expected-error @+1 {{yields 'i32' for an output holding 'f16'}}
    tdim.yield %i : i32
  }
  tdim.return
}

// -----

!m = !tdim.tensor<[r: ?, c: ?], f32>

tdim.kernel @k(%x: !m) -> (%y: !m) {
  // expected-error @+1 {{normalizes over `k`, which the input lacks (it has `r`, `c`)}}
  tdim.softmax ins(%x : !m) outs(%y : !m) over k
  tdim.return
}

// -----

tdim.kernel @k(%x: !tdim.tensor<[r: ?, c: ?], i32>) -> (%y: !tdim.tensor<[r: ?, c: ?], i32>) {
  // expected-error @+1 {{needs float tensors; they hold 'i32' and 'i32'}}
  tdim.log_softmax ins(%x : !tdim.tensor<[r: ?, c: ?], i32>) outs(%y : !tdim.tensor<[r: ?, c: ?], i32>) over c
  tdim.return
}

// -----

!m = !tdim.tensor<[r: ?, c: ?], f32>

tdim.kernel @k(%x: !m) -> (%y: !tdim.tensor<[c: ?], f32>) {
  // expected-error @+1 {{input has `r`, `c` but output has `c`}}
  tdim.softmax ins(%x : !m) outs(%y : !tdim.tensor<[c: ?], f32>) over c
  tdim.return
}

// -----

!m = !tdim.tensor<[r: ?, c: ?], f32>

tdim.kernel @k(%x: !m) -> (%y: !m) {
  // expected-error @+1 {{eps must be a positive finite number, not 0}}
  tdim.layer_norm ins(%x : !m) outs(%y : !m) over [c] eps 0.0
  tdim.return
}

// -----

!m = !tdim.tensor<[r: ?, c: ?], f32>

tdim.kernel @k(%x: !m, %w: !tdim.tensor<[r: ?], f32>) -> (%y: !m) {
  // expected-error @+1 {{weight has dimension `r`, which is not normalized over}}
  tdim.layer_norm ins(%x : !m) weight(%w : !tdim.tensor<[r: ?], f32>) outs(%y : !m) over [c] eps 1.0e-05
  tdim.return
}

// -----

// A scan: over an output dimension, with an epilogue, not accumulating;
// its region takes and yields each carried state in the state's type.
!a = !tdim.tensor<[t: ?, i: ?, k: ?], f16>
!b = !tdim.tensor<[j: ?, k: ?], f16>
!c = !tdim.tensor<[t: ?, i: ?, j: ?], f16>
tdim.kernel @k(%a: !a, %b: !b) -> (%c: !c) {
  // expected-error @+1 {{scans `s`, which the output lacks (it has `t`, `i`, `j`)}}
  tdim.contract ins(%a, %b : !a, !b) outs(%c : !c) scan s carry [0.0 : f32] epilogue {
  ^bb0(%x: f32, %v: f32):
    tdim.yield %x, %v : f32, f32
  }
  tdim.return
}

// -----

!a = !tdim.tensor<[t: ?, i: ?, k: ?], f16>
!b = !tdim.tensor<[j: ?, k: ?], f16>
!c = !tdim.tensor<[t: ?, i: ?, j: ?], f16>
tdim.kernel @k(%a: !a, %b: !b) -> (%c: !c) {
  // expected-error @+1 {{a scan needs an epilogue, and does not accumulate}}
  tdim.contract ins(%a, %b : !a, !b) outs(%c : !c) scan t carry [0.0 : f32]
  tdim.return
}

// -----

!a = !tdim.tensor<[t: ?, i: ?, k: ?], f16>
!b = !tdim.tensor<[j: ?, k: ?], f16>
!c = !tdim.tensor<[t: ?, i: ?, j: ?], f16>
tdim.kernel @k(%a: !a, %b: !b) -> (%c: !c) {
  // expected-error @+1 {{epilogue argument for carried state #0 has type 'f16' but the state is 'f32'}}
  tdim.contract ins(%a, %b : !a, !b) outs(%c : !c) scan t carry [0.0 : f32] epilogue {
  ^bb0(%x: f32, %v: f16):
    tdim.yield %x, %v : f32, f16
  }
  tdim.return
}

// -----

!a = !tdim.tensor<[t: ?, i: ?, k: ?], f16>
!b = !tdim.tensor<[j: ?, k: ?], f16>
!c = !tdim.tensor<[t: ?, i: ?, j: ?], f16>
tdim.kernel @k(%a: !a, %b: !b) -> (%c: !c) {
  tdim.contract ins(%a, %b : !a, !b) outs(%c : !c) scan t carry [0.0 : f32] epilogue {
  ^bb0(%x: f32, %v: f32):
    // expected-error @+1 {{yields 1 values but needs 2 (the output's, then each carried state's)}}
    tdim.yield %x : f32
  }
  tdim.return
}

// -----

!a = !tdim.tensor<[t: ?, i: ?, k: ?], f16>
!b = !tdim.tensor<[j: ?, k: ?], f16>
!c = !tdim.tensor<[t: ?, i: ?, j: ?], f16>
tdim.kernel @k(%a: !a, %b: !b) -> (%c: !c) {
  // expected-error @+1 {{carried state #0 starts from 1 : i32; write a float, e.g. `0.0 : f32`}}
  tdim.contract ins(%a, %b : !a, !b) outs(%c : !c) scan t carry [1 : i32] epilogue {
  ^bb0(%x: f32, %v: i32):
    tdim.yield %x, %v : f32, i32
  }
  tdim.return
}
