// Loads, stores, allocations and views.
// RUN: nerve-opt %s -split-input-file -verify-diagnostics

!m = !tdim.tensor<[r: ?, c: ?], f32>

tdim.kernel @k(%x: !m) {
  %i = tdim.const 0 : !tdim.index<r>
  %k = tdim.const 0 : !tdim.index<k>
  // expected-error @+1 {{tensor has no dimension `k` (it has `r`, `c`)}}
  %v = tdim.load %x[r = %i, k = %k] : !m
  tdim.return
}

// -----

!m = !tdim.tensor<[r: ?, c: ?], f32>

tdim.kernel @k(%x: !m) {
  %i = tdim.const 0 : !tdim.index<r>
  // expected-error @+1 {{indexes dimension `r` twice}}
  %v = tdim.load %x[r = %i, r = %i] : !m
  tdim.return
}

// -----

!m = !tdim.tensor<[r: ?, c: ?], f32>

tdim.kernel @k(%x: !m) {
  %i = tdim.const 0 : !tdim.index<r>
  %z = arith.constant 0.0 : f32
  // expected-error @+1 {{does not index dimension `c` of the tensor (it has `r`, `c`)}}
  tdim.store %z, %x[r = %i] : !m
  tdim.return
}

// -----

!m = !tdim.tensor<[r: 4], f32>

tdim.kernel @k(%x: !m) {
  %i = tdim.const 0 : !tdim.index<r>
  %z = arith.constant 0.0 : f64
  // expected-error @+1 {{stores a 'f64' into a tensor of 'f32'}}
  "tdim.store"(%z, %x, %i) : (f64, !m, !tdim.index<r>) -> ()
  tdim.return
}

// -----

tdim.kernel @k() {
  %lo = tdim.const 0 : !tdim.index<i>
  %hi = tdim.const 8 : !tdim.index<i>
  tdim.for %i over i from %lo to %hi {
    // expected-error @+1 {{must be at the top level of a kernel (it lives until the kernel returns)}}
    %a = tdim.alloc() : !tdim.tensor<[n: 4], f32>
  }
  tdim.return
}

// -----

tdim.kernel @k() {
  // expected-error @+1 {{makes row-major tensors; write the layout as the order of the dimensions, or take a tdim.view of the result}}
  %a = tdim.alloc() : !tdim.tensor<[n: 4, m: 4], f32, strides = [1, 4]>
  tdim.return
}

// -----

tdim.kernel @k() {
  %n = tdim.const 4 : !tdim.index<n>
  // expected-error @+1 {{tdim.alloc needs 2 sizes, one per dynamic dimension, but has 1}}
  %a = tdim.alloc(%n) : !tdim.tensor<[n: ?, m: ?], f32>
  tdim.return
}

// -----

!m = !tdim.tensor<[r: ?, c: 4], f32>

tdim.kernel @k(%x: !m) {
  %c = tdim.const 1 : !tdim.index<c>
  // expected-error @+1 {{slice of length 5 along `c` exceeds its size 4}}
  %s = tdim.slice %x along c from %c length 5 : !m
  tdim.return
}

// -----

!m = !tdim.tensor<[r: ?, c: 4], f32>

tdim.kernel @k(%x: !m) {
  %c = tdim.const 1 : !tdim.index<k>
  // expected-error @+1 {{'tdim.slice' op tensor has no dimension `k` (it has `r`, `c`)}}
  %s = tdim.slice %x along k from %c length 1 : !m
  tdim.return
}

// -----

!m = !tdim.tensor<[r: ?, c: 4], f32>

tdim.kernel @k(%x: !m) {
  %i = tdim.const 1 : !tdim.index<k>
  // expected-error @+1 {{'tdim.select' op tensor has no dimension `k` (it has `r`, `c`)}}
  %s = tdim.select %x[k = %i] : !m
  tdim.return
}

// -----

!m = !tdim.tensor<[r: ?, c: 4], f32>

tdim.kernel @k(%x: !m) {
  // expected-error @+1 {{'tdim.view' op lists 1 dimensions but the tensor has 2 (`r`, `c`)}}
  %v = tdim.view %x as [c] : !m
  tdim.return
}

// -----

!m = !tdim.tensor<[r: ?, c: 4], f32>

tdim.kernel @k(%x: !m) {
  // expected-error @+1 {{'tdim.view' op lists dimension `c` twice}}
  %v = tdim.view %x as [c, c] : !m
  tdim.return
}

// -----

!m = !tdim.tensor<[r: ?, c: 4], f32>

tdim.kernel @k(%x: !m) {
  // expected-error @+1 {{'tdim.view' op tensor has no dimension `k` (it has `r`, `c`)}}
  %v = tdim.view %x as [c, k] : !m
  tdim.return
}
